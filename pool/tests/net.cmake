# Tests of the runtime (pool/net), the config parser, the scores file and
# the respool CLI. Included from pool/tests/CMakeLists.txt.
rp_add_test(unit config SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/test_config.c
  LIBS rp_config)
rp_add_test(unit scores SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/test_scores.c
  LIBS rp_config)

# The runtime links the core; until the core target exists these wait.
if(TARGET rp_net)
  rp_add_test(integration net SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/test_net.c
    LIBS rp_net)
  set(_rp_net_scripts ${CMAKE_CURRENT_SOURCE_DIR}/net)
  rp_add_script_test(integration net_tcp_fallback
    ${_rp_net_scripts}/tcp_fallback.sh)
  if(RP_BUILD_TOOLS AND TARGET respool)
    rp_add_script_test(integration net_dig_udp_tcp
      ${_rp_net_scripts}/dig_udp_tcp.sh)
    rp_add_script_test(integration net_scores_restart
      ${_rp_net_scripts}/scores_restart.sh)
    rp_add_script_test(integration net_behaviour_unlimited
      ${_rp_net_scripts}/behaviour_unlimited.sh)
    rp_add_script_test(integration net_behaviour_limited
      ${_rp_net_scripts}/behaviour_limited.sh)
    rp_add_script_test(integration net_behaviour_dead
      ${_rp_net_scripts}/behaviour_dead.sh)
    # The behaviour checks send traffic for 20 s and retry once.
    set_tests_properties(integration.net_behaviour_limited
      integration.net_behaviour_dead integration.net_behaviour_unlimited
      PROPERTIES TIMEOUT 120)
    set_tests_properties(integration.net_behaviour_limited
      integration.net_behaviour_dead integration.net_behaviour_unlimited
      PROPERTIES RUN_SERIAL TRUE)
  endif()
  if(RP_BUILD_TOOLS AND TARGET respool)
    rp_add_script_test(bench relay_vs_dnsdist
      ${CMAKE_CURRENT_SOURCE_DIR}/bench/relay-vs-dnsdist.sh)
  endif()
endif()
