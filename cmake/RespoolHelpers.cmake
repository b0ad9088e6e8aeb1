# Shared build helpers: one warning list, sanitizer flags and the test helper.

set(RP_WARNINGS
  -Wall -Wextra -Wpedantic -Wshadow -Wstrict-prototypes -Wmissing-prototypes
  -Wconversion -Wsign-conversion -Wformat=2 -Wvla -Wcast-qual)

# rp_target_defaults(<target>): warnings, POSIX level, sanitizers, coverage.
function(rp_target_defaults target)
  target_compile_options(${target} PRIVATE ${RP_WARNINGS})
  target_compile_definitions(${target} PRIVATE _POSIX_C_SOURCE=200809L)
  if(RP_WERROR)
    target_compile_options(${target} PRIVATE -Werror)
  endif()
  if(RP_SANITIZE)
    target_compile_options(${target} PRIVATE
      -fsanitize=address,undefined -fno-omit-frame-pointer
      -fno-sanitize-recover=undefined)
    target_link_options(${target} PRIVATE -fsanitize=address,undefined)
  endif()
  if(RP_COVERAGE)
    target_compile_options(${target} PRIVATE --coverage)
    target_link_options(${target} PRIVATE --coverage)
  endif()
endfunction()

# rp_add_test(<label> <name> SOURCES ... [LIBS ...] [TIMEOUT s])
# Builds test_<name> and registers it as <label>.<name> with that label.
function(rp_add_test label name)
  cmake_parse_arguments(T "" "TIMEOUT" "SOURCES;LIBS;ARGS" ${ARGN})
  if(NOT T_TIMEOUT)
    if(label STREQUAL "unit")
      set(T_TIMEOUT 10)
    elseif(label STREQUAL "bench")
      set(T_TIMEOUT 600)
    else()
      set(T_TIMEOUT 60)
    endif()
  endif()
  add_executable(test_${name} ${T_SOURCES})
  rp_target_defaults(test_${name})
  target_link_libraries(test_${name} PRIVATE ${T_LIBS} PkgConfig::CMOCKA)
  add_test(NAME ${label}.${name} COMMAND test_${name} ${T_ARGS})
  set_tests_properties(${label}.${name} PROPERTIES
    LABELS ${label} TIMEOUT ${T_TIMEOUT})
endfunction()

# rp_add_script_test(<label> <name> <script> [args...]): a shell-driven test.
function(rp_add_script_test label name script)
  add_test(NAME ${label}.${name} COMMAND ${script} ${ARGN})
  set(timeout 60)
  if(label STREQUAL "bench")
    set(timeout 900)
  endif()
  set_tests_properties(${label}.${name} PROPERTIES
    LABELS ${label} TIMEOUT ${timeout}
    ENVIRONMENT "RP_BUILD_DIR=${PROJECT_BINARY_DIR};RP_SOURCE_DIR=${PROJECT_SOURCE_DIR}")
endfunction()
