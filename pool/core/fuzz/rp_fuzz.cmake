# rp_fuzz.cmake: rp_add_fuzzer, shared by the fuzz targets of pool/core
# and pool/net (pool/dns/fuzz predates it and spells the same steps out).
include_guard(GLOBAL)

# rp_fuzz_lib_sources(<out> <target>...) stores in <out> the absolute
# paths of the sources of the library targets, duplicates dropped. Read
# from the targets, so that a file added to a library is fuzzed too.
function(rp_fuzz_lib_sources out)
  set(all)
  foreach(t ${ARGN})
    get_target_property(srcs ${t} SOURCES)
    get_target_property(dir ${t} SOURCE_DIR)
    foreach(s ${srcs})
      get_filename_component(abs ${s} ABSOLUTE BASE_DIR ${dir})
      list(APPEND all ${abs})
    endforeach()
  endforeach()
  list(REMOVE_DUPLICATES all)
  set(${out} ${all} PARENT_SCOPE)
endfunction()

# rp_add_fuzzer(<name> SOURCES <harness>... LIBS <library>...
#               [LINK <link item>...] CORPUS <dir>)
#
# With RP_FUZZ and clang: the libFuzzer binary fuzz_<name> in
# ${PROJECT_BINARY_DIR}/fuzz/ (where `./run.sh fuzz` finds it), built from
# the harness and the sources of LIBS, all compiled with the fuzzer's
# coverage instrumentation, ASan and UBSan, and with assert() on
# (-UNDEBUG: the core's internal invariants are part of the oracle).
# LINK adds what those sources need beyond libc (cJSON, libm).
#
# With RP_BUILD_TESTS: the ctest unit.<name>_fuzz_replay, the harness
# linked with LIBS and run over every file of CORPUS by replay_main.c.
function(rp_add_fuzzer name)
  cmake_parse_arguments(F "" "CORPUS" "SOURCES;LIBS;LINK" ${ARGN})
  if(RP_FUZZ)
    if(CMAKE_C_COMPILER_ID MATCHES "Clang")
      rp_fuzz_lib_sources(lib_srcs ${F_LIBS})
      add_executable(fuzz_${name} ${F_SOURCES} ${lib_srcs})
      foreach(lib ${F_LIBS})
        target_include_directories(fuzz_${name} PRIVATE
          $<TARGET_PROPERTY:${lib},INCLUDE_DIRECTORIES>)
      endforeach()
      target_link_libraries(fuzz_${name} PRIVATE ${F_LINK})
      rp_target_defaults(fuzz_${name})
      target_compile_options(fuzz_${name} PRIVATE -UNDEBUG
        -fsanitize=fuzzer,address,undefined -fno-omit-frame-pointer
        -fno-sanitize-recover=undefined)
      target_link_options(fuzz_${name} PRIVATE
        -fsanitize=fuzzer,address,undefined)
      set_target_properties(fuzz_${name} PROPERTIES
        RUNTIME_OUTPUT_DIRECTORY ${PROJECT_BINARY_DIR}/fuzz)
    else()
      message(WARNING "RP_FUZZ needs clang (CC=clang); fuzz_${name} skipped")
    endif()
  endif()
  if(RP_BUILD_TESTS)
    # replay_main.c drives LLVMFuzzerTestOneInput without libFuzzer.
    rp_add_test(unit ${name}_fuzz_replay
      SOURCES ${F_SOURCES} ${PROJECT_SOURCE_DIR}/pool/dns/fuzz/replay_main.c
      LIBS ${F_LIBS}
      ARGS ${F_CORPUS})
    # A harness may reach its module's internal headers, as the fuzz
    # build above does.
    foreach(lib ${F_LIBS})
      target_include_directories(test_${name}_fuzz_replay PRIVATE
        $<TARGET_PROPERTY:${lib},INCLUDE_DIRECTORIES>)
    endforeach()
  endif()
endfunction()
