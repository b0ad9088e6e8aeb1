/*
 * fakeres.c: the `fakeres` command, loopback resolvers with behaviour
 * profiles.
 *
 *   fakeres [-r SPEC]... (--upstream IP:PORT | --answer) [--bind IP]
 *           [--upstream-timeout 2s] [--seed N] [--lifetime DUR] [--help]
 *
 * Prints one JSON line with every resolver's UDP and TCP address once all
 * are listening; on SIGTERM or SIGINT (or when --lifetime runs out) it
 * closes everything, prints one JSON line of per-resolver counts and
 * exits 0.
 */
#include "fr_server.h"

#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include <uv.h>

/* FR_MAX_RESOLVERS bounds -r options. */
#define FR_MAX_RESOLVERS 1024
/* FR_OPT_NAME_LEN bounds the name part of --name=value. */
#define FR_OPT_NAME_LEN 64
/* FR_DEFAULT_UPSTREAM_TIMEOUT is --upstream-timeout's default. */
#define FR_DEFAULT_UPSTREAM_TIMEOUT (2 * RP_SECONDS)
/* FR_EXIT_USAGE is the exit status for a bad command line. */
#define FR_EXIT_USAGE 2
/* FR_PORT_MAX is the largest port. */
#define FR_PORT_MAX 65535UL
/* FR_PID_SHIFT moves the pid above the fast-changing clock bits when
   seeding from both. */
#define FR_PID_SHIFT 32
/* FR_DECIMAL is the base of numbers on the command line. */
#define FR_DECIMAL 10

static const char usage[] =
    "usage: fakeres [-r SPEC]... (--upstream IP:PORT | --answer)\n"
    "               [--bind IP] [--upstream-timeout DUR] [--seed N]\n"
    "               [--lifetime DUR] [--help]\n"
    "\n"
    "Runs loopback DNS resolvers with behaviour profiles, each on UDP and\n"
    "TCP (RFC 7766 framing) at its own address.\n"
    "\n"
    "  -r, --resolver SPEC   add a resolver (repeatable; default: one\n"
    "                        unlimited resolver). SPEC is comma-separated:\n"
    "      name=r1           name in the JSON lines (default rN)\n"
    "      rate=30           limit in queries/s (token bucket; 0 = none)\n"
    "      burst=3           bucket depth in queries (default rate/10, >= 1)\n"
    "      over=refuse       past the limit: refuse | servfail | drop\n"
    "      latency=60ms      delay of every answer (us, ms, s, m)\n"
    "      jitter=5ms        uniform spread: latency +- jitter\n"
    "      loss=10%          exchanges lost (half before the resolver,\n"
    "                        half after it)\n"
    "      dead              answers nothing\n"
    "      addr=127.0.0.2    listen address (default --bind)\n"
    "      port=0            listen port, UDP and TCP (0 = a free one)\n"
    "  --answer              answer every query: A 127.0.0.1, AAAA ::1, TXT\n"
    "                        of the size the first label asks (s1000 or\n"
    "                        size-1000; default: as much as fits)\n"
    "  --upstream IP:PORT    forward each query there over UDP\n"
    "  --upstream-timeout D  give up on the upstream after D (default 2s)\n"
    "  --bind IP             default listen address (default 127.0.0.1)\n"
    "  --seed N              seed of the loss and jitter draws\n"
    "  --lifetime D          exit as on SIGTERM after D (default: never)\n"
    "\n"
    "Prints {\"resolvers\":[{\"name\",\"udp\",\"tcp\"}..]} when listening and\n"
    "the per-resolver counts as one JSON line on SIGTERM/SIGINT.\n";

/* fr_main is the program's state, for the signal callbacks. */
typedef struct fr_main {
  uv_loop_t loop;
  fr_server *srv;
  uv_signal_t sigterm, sigint;
  uv_timer_t lifetime;
  int lifetime_on;
} fr_main;

static void stop_all(fr_main *m) {
  fr_server_close(m->srv);
  uv_close((uv_handle_t *)&m->sigterm, NULL);
  uv_close((uv_handle_t *)&m->sigint, NULL);
  uv_close((uv_handle_t *)&m->lifetime, NULL);
}

static void on_signal(uv_signal_t *h, int signum) {
  (void)signum;
  stop_all(h->data);
}

static void on_lifetime(uv_timer_t *t) { stop_all(t->data); }

/* parse_ip_port reads "a.b.c.d:port". Returns 0 or -1. */
static int parse_ip_port(const char *text, struct sockaddr_in *out) {
  char ip[INET_ADDRSTRLEN];
  const char *colon = strrchr(text, ':');
  char *end;
  unsigned long port;
  size_t n;

  if (colon == NULL) {
    return -1;
  }
  n = (size_t)(colon - text);
  if (n == 0 || n >= sizeof(ip)) {
    return -1;
  }
  memcpy(ip, text, n);
  ip[n] = '\0';
  port = strtoul(colon + 1, &end, FR_DECIMAL);
  if (*(colon + 1) == '\0' || *end != '\0' || port == 0 || port > FR_PORT_MAX) {
    return -1;
  }
  return uv_ip4_addr(ip, (int)port, out) == 0 ? 0 : -1;
}

/* opt_value returns the value of option |argv[*pi]|: |inline_value|
   (from --name=value) or the next word; NULL after printing an error. */
static const char *opt_value(int argc, char **argv, int *pi,
                             const char *inline_value) {
  if (inline_value != NULL) {
    return inline_value;
  }
  if (*pi + 1 >= argc) {
    fprintf(stderr, "fakeres: %s needs a value\n", argv[*pi]);
    return NULL;
  }
  ++*pi;
  return argv[*pi];
}

/* FR_GO_ON is what the steps of main return to go on (not an exit
   status). */
#define FR_GO_ON (-1)

/* fr_cli is the command line. */
typedef struct fr_cli {
  /* spec_text holds the |nspecs| -r values (argv's). */
  const char *spec_text[FR_MAX_RESOLVERS];
  size_t nspecs;
  /* cfg is the server's configuration; have_mode is 1 once --answer or
     --upstream was given, seeded once --seed was. */
  fr_server_config cfg;
  int have_mode;
  int seeded;
  /* bind_ip is --bind (argv's or the default). */
  const char *bind_ip;
  /* lifetime is --lifetime, 0 = never. */
  rp_duration lifetime;
} fr_cli;

/* cli_set_mode records --answer or --upstream. Returns FR_GO_ON, or
   FR_EXIT_USAGE (printed) when a mode was already given. */
static int cli_set_mode(fr_cli *c, fr_mode mode) {
  if (c->have_mode) {
    fprintf(stderr, "fakeres: give one of --answer and --upstream\n");
    return FR_EXIT_USAGE;
  }
  c->have_mode = 1;
  c->cfg.mode = mode;
  return FR_GO_ON;
}

/* cli_take_value takes option |a| (a known one that takes a value) with
   |v| into |c|. Returns FR_GO_ON, or FR_EXIT_USAGE (printed). */
static int cli_take_value(fr_cli *c, const char *a, const char *v) {
  rp_duration d;
  char *end;

  if (strcmp(a, "-r") == 0 || strcmp(a, "--resolver") == 0) {
    if (c->nspecs == FR_MAX_RESOLVERS) {
      fprintf(stderr, "fakeres: at most %d resolvers\n", FR_MAX_RESOLVERS);
      return FR_EXIT_USAGE;
    }
    c->spec_text[c->nspecs++] = v;
  } else if (strcmp(a, "--upstream") == 0) {
    if (c->have_mode) {
      return cli_set_mode(c, FR_MODE_UPSTREAM);
    }
    if (parse_ip_port(v, &c->cfg.upstream) != 0) {
      fprintf(stderr,
              "fakeres: --upstream: bad address '%s' (want "
              "IPv4:PORT)\n",
              v);
      return FR_EXIT_USAGE;
    }
    return cli_set_mode(c, FR_MODE_UPSTREAM);
  } else if (strcmp(a, "--upstream-timeout") == 0 ||
             strcmp(a, "--lifetime") == 0) {
    if (fr_parse_duration(v, &d) != 0 || d == 0) {
      fprintf(stderr,
              "fakeres: %s: bad duration '%s' (want 300ms, 2s, "
              "1m)\n",
              a, v);
      return FR_EXIT_USAGE;
    }
    if (strcmp(a, "--lifetime") == 0) {
      c->lifetime = d;
    } else {
      c->cfg.upstream_timeout = d;
    }
  } else if (strcmp(a, "--bind") == 0) {
    c->bind_ip = v;
  } else {
    c->cfg.seed = strtoull(v, &end, FR_DECIMAL);
    if (*v == '\0' || *end != '\0') {
      fprintf(stderr, "fakeres: --seed: bad number '%s'\n", v);
      return FR_EXIT_USAGE;
    }
    c->seeded = 1;
  }
  return FR_GO_ON;
}

/* cli_takes_value returns 1 when option |a| takes a value, else 0. */
static int cli_takes_value(const char *a) {
  static const char *const names[] = {
      "-r",         "--resolver", "--upstream", "--upstream-timeout",
      "--lifetime", "--bind",     "--seed"};
  size_t i;

  for (i = 0; i < sizeof(names) / sizeof(names[0]); ++i) {
    if (strcmp(a, names[i]) == 0) {
      return 1;
    }
  }
  return 0;
}

/* cli_parse reads |argv| into |c| (given its defaults here). Returns
   FR_GO_ON, or the exit status (printed). */
static int cli_parse(fr_cli *c, int argc, char **argv) {
  int i;
  int rv;

  memset(c, 0, sizeof(*c));
  c->cfg = (fr_server_config){
      .mode = FR_MODE_ANSWER,
      .upstream_timeout = FR_DEFAULT_UPSTREAM_TIMEOUT,
      .seed = 0,
  };
  c->bind_ip = "127.0.0.1";
  for (i = 1; i < argc; ++i) {
    const char *a = argv[i];
    const char *v, *eq, *inl = NULL;
    char name[FR_OPT_NAME_LEN];

    /* --name=value is --name value. */
    if (a[0] == '-' && a[1] == '-' && (eq = strchr(a, '=')) != NULL &&
        (size_t)(eq - a) < sizeof(name)) {
      memcpy(name, a, (size_t)(eq - a));
      name[eq - a] = '\0';
      inl = eq + 1;
      a = name;
    }

    if (inl != NULL &&
        (strcmp(a, "--help") == 0 || strcmp(a, "--answer") == 0)) {
      fprintf(stderr, "fakeres: %s takes no value (%s)\n", a, argv[i]);
      return FR_EXIT_USAGE;
    }
    if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
      fputs(usage, stdout);
      return 0;
    } else if (strcmp(a, "--answer") == 0) {
      rv = cli_set_mode(c, FR_MODE_ANSWER);
    } else if (cli_takes_value(a)) {
      v = opt_value(argc, argv, &i, inl);
      rv = v == NULL ? FR_EXIT_USAGE : cli_take_value(c, a, v);
    } else {
      fprintf(stderr, "fakeres: unknown option '%s'\n%s", a, usage);
      return FR_EXIT_USAGE;
    }
    if (rv != FR_GO_ON) {
      return rv;
    }
  }
  if (!c->have_mode) {
    fprintf(stderr, "fakeres: give --answer or --upstream IP:PORT\n%s", usage);
    return FR_EXIT_USAGE;
  }
  return FR_GO_ON;
}

/* cli_specs parses |c|'s resolver specs into |specs| (one unlimited
   resolver when none was given) on the --bind address, naming the
   unnamed ones rN, and hands them to |c|'s configuration. Returns
   FR_GO_ON, or FR_EXIT_USAGE (printed). */
static int cli_specs(fr_cli *c, fr_spec *specs) {
  struct sockaddr_in bind_addr;
  char err[FR_ERRBUF_LEN];
  size_t i, j;

  if (uv_ip4_addr(c->bind_ip, 0, &bind_addr) != 0) {
    fprintf(stderr, "fakeres: --bind: bad IPv4 address '%s'\n", c->bind_ip);
    return FR_EXIT_USAGE;
  }
  if (c->nspecs == 0) {
    c->spec_text[c->nspecs++] = "";
  }
  for (i = 0; i < c->nspecs; ++i) {
    fr_spec_default(&specs[i]);
    memcpy(specs[i].addr, &bind_addr.sin_addr, sizeof(specs[i].addr));
    if (fr_spec_parse(&specs[i], c->spec_text[i], err, sizeof(err)) != 0) {
      fprintf(stderr, "fakeres: -r '%s': %s\n", c->spec_text[i], err);
      return FR_EXIT_USAGE;
    }
    if (specs[i].name[0] == '\0') {
      snprintf(specs[i].name, sizeof(specs[i].name), "r%zu", i + 1);
    }
    for (j = 0; j < i; ++j) {
      if (strcmp(specs[i].name, specs[j].name) == 0) {
        fprintf(stderr, "fakeres: two resolvers named '%s'\n", specs[i].name);
        return FR_EXIT_USAGE;
      }
    }
  }
  c->cfg.specs = specs;
  c->cfg.nspecs = c->nspecs;
  return FR_GO_ON;
}

/* run serves |cfg| on |m|'s loop until a signal or |lifetime| (0 =
   never) stops it, printing the addresses and then the counts. Returns
   the exit status. */
static int run(fr_main *m, const fr_server_config *cfg, rp_duration lifetime) {
  char err[FR_ERRBUF_LEN];
  int rv;

  signal(SIGPIPE, SIG_IGN);
  if (uv_loop_init(&m->loop) != 0) {
    fprintf(stderr, "fakeres: cannot start the event loop\n");
    return 1;
  }
  rv = fr_server_new(&m->srv, &m->loop, cfg, err, sizeof(err));
  if (rv != 0) {
    fprintf(stderr, "fakeres: %s (%s)\n", err, rp_strerror(rv));
    uv_loop_close(&m->loop);
    return 1;
  }
  uv_signal_init(&m->loop, &m->sigterm);
  uv_signal_init(&m->loop, &m->sigint);
  uv_timer_init(&m->loop, &m->lifetime);
  m->sigterm.data = m;
  m->sigint.data = m;
  m->lifetime.data = m;
  uv_signal_start(&m->sigterm, on_signal, SIGTERM);
  uv_signal_start(&m->sigint, on_signal, SIGINT);
  if (lifetime != 0) {
    uv_timer_start(&m->lifetime, on_lifetime, lifetime / RP_MILLISECONDS, 0);
  }
  fr_server_print_addresses(m->srv, stdout);
  uv_run(&m->loop, UV_RUN_DEFAULT);
  fr_server_print_counts(m->srv, stdout);
  fr_server_del(m->srv);
  rv = uv_loop_close(&m->loop);
  if (rv != 0) {
    fprintf(stderr, "fakeres: loop not empty at exit: %s\n", uv_strerror(rv));
    return 1;
  }
  return 0;
}

int main(int argc, char **argv) {
  static fr_spec specs[FR_MAX_RESOLVERS];
  static fr_main m;
  static fr_cli c;
  int rv = cli_parse(&c, argc, argv);

  if (rv == FR_GO_ON) {
    rv = cli_specs(&c, specs);
  }
  if (rv != FR_GO_ON) {
    return rv;
  }
  if (!c.seeded) {
    c.cfg.seed = uv_hrtime() ^ ((uint64_t)uv_os_getpid() << FR_PID_SHIFT);
  }
  return run(&m, &c.cfg, c.lifetime);
}
