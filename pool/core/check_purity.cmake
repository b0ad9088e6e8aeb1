# check_purity.cmake: fails if any file of pool/core includes an I/O
# header or calls a clock, the global rand or printf.
# Usage: cmake -DCORE_DIR=<dir> -P check_purity.cmake
file(GLOB files "${CORE_DIR}/*.c" "${CORE_DIR}/*.h")
set(bad_patterns
  "#[ \t]*include[ \t]*[<\"]uv\\.h"
  "#[ \t]*include[ \t]*[<\"]openssl/"
  "#[ \t]*include[ \t]*[<\"]sys/socket\\.h"
  "#[ \t]*include[ \t]*[<\"]netinet/"
  "#[ \t]*include[ \t]*[<\"]arpa/"
  "#[ \t]*include[ \t]*[<\"]time\\.h"
  "clock_gettime"
  "gettimeofday"
  "(^|[^A-Za-z0-9_.>])rand[ \t]*\\("
  "(^|[^A-Za-z0-9_.>])random[ \t]*\\("
  "(^|[^A-Za-z0-9_])printf[ \t]*\\("
  "(^|[^A-Za-z0-9_])puts[ \t]*\\("
  "(^|[^A-Za-z0-9_])getenv[ \t]*\\("
  "stdout"
  "stderr")
set(failed 0)
list(LENGTH files nfiles)
if(nfiles EQUAL 0)
  message(FATAL_ERROR "no files found in ${CORE_DIR}")
endif()
foreach(f ${files})
  file(STRINGS "${f}" lines)
  set(lineno 0)
  foreach(line IN LISTS lines)
    math(EXPR lineno "${lineno} + 1")
    foreach(p ${bad_patterns})
      if(line MATCHES "${p}")
        message(SEND_ERROR "${f}:${lineno}: forbidden in the core: ${line}")
        set(failed 1)
      endif()
    endforeach()
  endforeach()
endforeach()
if(failed)
  message(FATAL_ERROR "pool/core purity check failed")
endif()
message(STATUS "pool/core purity check passed (${nfiles} files)")
