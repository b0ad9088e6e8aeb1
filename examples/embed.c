/*
 * embed.c: the respool pool embedded in a program of its own, built
 * against an installed respool (pkg-config respool, or the CMake package
 * respool::respool; see examples/CMakeLists.txt and docs/embedding.md).
 *
 * Usage: embed SECONDS RESOLVER...  runs a pool over the resolvers,
 * prints the address it listens on, serves for SECONDS and stops.
 */
#include <respool_net.h>

#include <stdio.h>
#include <stdlib.h>

static void on_closed(rp_net_pool *np, void *user_data) {
  (void)np;
  (void)user_data;
}

static void on_timer(uv_timer_t *t) {
  rp_net_pool_stop(t->data, on_closed, NULL);
  uv_close((uv_handle_t *)t, NULL);
}

int main(int argc, char **argv) {
  uv_loop_t *loop = uv_default_loop();
  rp_net_options opts = {0};
  rp_net_pool *np;
  rp_config cfg;
  uv_timer_t timer;
  char err[256], addr[64];
  int i;

  if (argc < 3) {
    fprintf(stderr, "usage: embed SECONDS RESOLVER...\n");
    return 2;
  }
  rp_config_init(&cfg, NULL);
  for (i = 2; i < argc; ++i) {
    if (rp_config_add_resolver(&cfg, argv[i], "command line", "resolver",
                               err, sizeof(err)) != 0) {
      fprintf(stderr, "embed: %s\n", err);
      rp_config_free(&cfg);
      return 2;
    }
  }
  opts.config = &cfg;
  opts.kind = RP_KIND_GENERIC;
  if (rp_net_pool_start(&np, loop, &opts, err, sizeof(err)) != 0) {
    fprintf(stderr, "embed: %s\n", err);
    rp_config_free(&cfg);
    uv_run(loop, UV_RUN_DEFAULT);
    return 1;
  }
  rp_config_free(&cfg);
  rp_net_pool_format_address(np, addr, sizeof(addr));
  printf("%s\n", addr);
  fflush(stdout);
  uv_timer_init(loop, &timer);
  timer.data = np;
  uv_timer_start(&timer, on_timer, (uint64_t)atoi(argv[1]) * 1000, 0);
  uv_run(loop, UV_RUN_DEFAULT);
  return uv_loop_close(loop) == 0 ? 0 : 1;
}
