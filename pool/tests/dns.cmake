# Unit tests of the DNS wire codec (pool/dns). Fixtures: fixtures/dns/*.hex.
rp_add_test(unit dns SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/test_dns.c LIBS rp_dns)
target_compile_definitions(test_dns PRIVATE
  RP_DNS_FIXTURE_DIR="${CMAKE_CURRENT_SOURCE_DIR}/fixtures/dns")
