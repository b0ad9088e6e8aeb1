# Tests of the runtime (pool/net), the config parser, the scores file and
# the respool CLI. Included from pool/tests/CMakeLists.txt.
rp_add_test(unit config SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/test_config.c
  LIBS rp_config rp_test_mem)
rp_add_test(unit scores SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/test_scores.c
  LIBS rp_config rp_test_mem)
rp_add_test(unit tcpframe SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/test_tcpframe.c
  LIBS rp_tcpframe)
# Module tests of pool/net's internal headers (scores.h, tcpframe.h).
foreach(t scores tcpframe)
  target_include_directories(test_${t} PRIVATE ${PROJECT_SOURCE_DIR}/pool/net)
endforeach()

# The runtime links the core; until the core target exists these wait.
if(TARGET rp_net)
  rp_add_test(integration net SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/test_net.c
    LIBS rp_net rp_test_resolver)
  rp_add_test(integration net_disc SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/test_disc.c
    LIBS rp_disc)
  # Needs the openssl command (it makes the server's certificate).
  rp_add_test(integration net_doh SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/test_doh.c
    LIBS rp_net rp_test_tls rp_test_client PkgConfig::NGHTTP2)
  rp_add_test(integration net_dot SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/test_dot.c
    LIBS rp_net rp_test_tls rp_test_client)
  set(_rp_net_scripts ${CMAKE_CURRENT_SOURCE_DIR}/net)
  rp_add_script_test(integration net_tcp_fallback
    ${_rp_net_scripts}/tcp_fallback.sh)
  rp_add_script_test(integration net_tc_no_tcp
    ${_rp_net_scripts}/tc_no_tcp.sh)
  if(RP_BUILD_TOOLS AND TARGET respool)
    rp_add_script_test(integration net_dig_udp_tcp
      ${_rp_net_scripts}/dig_udp_tcp.sh)
    rp_add_script_test(integration net_scores_restart
      ${_rp_net_scripts}/scores_restart.sh)
    rp_add_script_test(integration net_tcp_clients
      ${_rp_net_scripts}/tcp_clients.sh)
    rp_add_script_test(integration net_behaviour_unlimited
      ${_rp_net_scripts}/behaviour_unlimited.sh)
    rp_add_script_test(integration net_behaviour_limited
      ${_rp_net_scripts}/behaviour_limited.sh)
    rp_add_script_test(integration net_behaviour_dead
      ${_rp_net_scripts}/behaviour_dead.sh)
    rp_add_script_test(integration net_dead_first
      ${_rp_net_scripts}/dead_first.sh)
    rp_add_script_test(integration net_forge_ports
      ${_rp_net_scripts}/forge_ports.sh)
    rp_add_script_test(integration net_forge_case
      ${_rp_net_scripts}/forge_case.sh)
    rp_add_script_test(integration net_flood_start
      ${_rp_net_scripts}/flood_start.sh)
    rp_add_script_test(integration net_cli_loud
      ${_rp_net_scripts}/cli_loud.sh)
    rp_add_script_test(integration net_metrics
      ${_rp_net_scripts}/metrics.sh)
    rp_add_script_test(integration net_reload
      ${_rp_net_scripts}/reload.sh)
    rp_add_script_test(integration readme_quickstart
      ${_rp_net_scripts}/readme_quickstart.sh)
    rp_add_script_test(integration install
      ${_rp_net_scripts}/install.sh)
    rp_add_script_test(integration install_deb
      ${_rp_net_scripts}/deb.sh)
    # DoT and DoH against Debian's dnsdist, discovery over 58 000
    # candidates (issue 5).
    rp_add_script_test(integration net_tls_dot_doh
      ${_rp_net_scripts}/tls_dot_doh.sh)
    rp_add_script_test(integration net_tls_restart
      ${_rp_net_scripts}/tls_restart.sh)
    rp_add_script_test(integration net_tls_refusals
      ${_rp_net_scripts}/tls_refusals.sh)
    rp_add_script_test(integration net_disc_58k
      ${_rp_net_scripts}/disc_58k.sh)
    set_tests_properties(integration.net_tls_refusals integration.net_disc_58k
      PROPERTIES RUN_SERIAL TRUE)
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
    rp_add_script_test(bench net_tls_relay
      ${_rp_net_scripts}/bench_tls_relay.sh)
    # What 0x20 costs the relay, in instructions (callgrind), not time.
    rp_add_script_test(bench case_cost
      ${CMAKE_CURRENT_SOURCE_DIR}/bench/case-cost.sh)
    set_tests_properties(bench.case_cost PROPERTIES TIMEOUT 300)
    # Ten minutes of tunnel traffic through changing conditions under ASan
    # and UBSan (build-asan/, built by the script when missing).
    rp_add_script_test(bench soak ${CMAKE_CURRENT_SOURCE_DIR}/bench/soak.sh)
    set_tests_properties(bench.soak PROPERTIES TIMEOUT 2400 RUN_SERIAL TRUE)
  endif()
endif()
