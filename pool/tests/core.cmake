# Unit tests and the micro-benchmark of the pool core (pool/core).
set(RP_CORE_HARNESS ${CMAKE_CURRENT_SOURCE_DIR}/test_core_harness.c)
# The harness's files run seconds of virtual time over thousands of
# queries: 4-6 s each under ASan alone, and unit.core_select passed 10 s
# under the CI's parallel ASan run. Their results never depend on wall
# time (a fake clock), so the timeout only has to catch a hang: 60 s.
# Every test is listed: a file that goes missing fails the configure
# (rp_add_test names its sources) instead of dropping its test.
foreach(t pool select caps timing tunnel)
  rp_add_test(unit core_${t}
    SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/test_core_${t}.c ${RP_CORE_HARNESS}
    LIBS rp_core rp_test_mem TIMEOUT 60)
  target_include_directories(test_core_${t} PRIVATE
    ${PROJECT_SOURCE_DIR}/pool/dns ${CMAKE_CURRENT_SOURCE_DIR})
endforeach()
# The settings table needs only the public API.
rp_add_test(unit core_settings
  SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/test_core_settings.c LIBS rp_core)
# Module-level tests (internal headers); health.c is tested in
# test_core_rtt.c.
foreach(t ratelim rtt sense)
  rp_add_test(unit core_${t}
    SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/test_core_${t}.c LIBS rp_core)
  target_include_directories(test_core_${t} PRIVATE
    ${PROJECT_SOURCE_DIR}/pool/core ${PROJECT_SOURCE_DIR}/pool/dns)
endforeach()
# 0x20 (pool/core/case.h): the module's functions (an internal header)
# and the pool with the harness.
rp_add_test(unit core_case
  SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/test_core_case.c ${RP_CORE_HARNESS}
  LIBS rp_core rp_test_mem)
target_include_directories(test_core_case PRIVATE
  ${PROJECT_SOURCE_DIR}/pool/core ${PROJECT_SOURCE_DIR}/pool/dns
  ${CMAKE_CURRENT_SOURCE_DIR})
# Micro-benchmark: decisions per second with 10, 100 and 10 000 resolvers.
add_executable(bench_core ${CMAKE_CURRENT_SOURCE_DIR}/bench_core.c)
rp_target_defaults(bench_core)
target_link_libraries(bench_core PRIVATE rp_core)
target_include_directories(bench_core PRIVATE ${PROJECT_SOURCE_DIR}/pool/dns)
add_test(NAME bench.core COMMAND bench_core)
set_tests_properties(bench.core PROPERTIES LABELS bench TIMEOUT 600)
