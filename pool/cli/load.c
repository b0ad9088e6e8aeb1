/*
 * load.c: the respool command's configuration from its options: the
 * config file, the resolver files, -r and the other options over it
 * (cli_load_config), then the checks a run needs (cli_check_config).
 * main.c calls both at start and again on SIGHUP, so a reload reads the
 * files as a start would and rejects what a start would reject.
 */
#include "cli.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* CLI_MAX_WANT is the largest --want, as discovery.want in a config. */
#define CLI_MAX_WANT 1000000u

int cli_load_config(const cli_args *a, rp_config *cfg, char *err,
                    size_t errlen) {
  size_t i;
  int rv = 0;

  rp_config_init(cfg, NULL);
  if (a->config_file) {
    rv = rp_config_load_file(cfg, a->config_file, err, errlen);
  }
  for (i = 0; rv == 0 && i < a->nfiles; ++i) {
    rv = rp_config_add_resolver_file(cfg, a->files[i], err, errlen);
  }
  for (i = 0; rv == 0 && i < a->nresolvers; ++i) {
    rv = rp_config_add_resolver(cfg, a->resolvers[i], "command line",
                                "--resolver", err, errlen);
  }
  for (i = 0; rv == 0 && i < a->nsets; ++i) {
    char why[RP_SETTINGS_ERRLEN];

    rv = rp_config_add_tuning(cfg, a->sets[i], why, sizeof(why));
    if (rv == RP_ERR_CONFIG) {
      snprintf(err, errlen, "command line: --set: %s", why);
    }
  }
  if (rv == 0 && a->listen) {
    rv = rp_config_parse_listen(a->listen, &cfg->listen);
    cfg->has_listen = 1;
    if (rv != 0) {
      snprintf(err, errlen, "command line: --listen: bad address (%s)",
               a->listen);
    }
  }
  if (rv == 0 && a->kind) {
    rv = rp_config_parse_kind(a->kind, &cfg->kind);
    cfg->has_kind = 1;
    if (rv != 0) {
      snprintf(err, errlen,
               "command line: --kind: expected auto, dnstt, masterdns or "
               "generic (%s)",
               a->kind);
    }
  }
  if (rv == 0 && a->scores) {
    rv = rp_config_set_string(cfg, RP_CONFIG_SCORES_FILE, a->scores);
  }
  if (rv == 0 && a->want) {
    char *end;
    unsigned long v = strtoul(a->want, &end, 10);
    if (*end || a->want[0] == '-' || v < 1 || v > CLI_MAX_WANT) {
      snprintf(err, errlen, "command line: --want: bad number (%s; 1 to %u)",
               a->want, (unsigned)CLI_MAX_WANT);
      rv = RP_ERR_INVALID_ARGUMENT;
    } else {
      cfg->discovery.want = (uint32_t)v;
    }
  }
  if (rv == 0 && a->pretest) {
    rv = rp_config_set_string(cfg, RP_CONFIG_PRETEST_DOMAIN, a->pretest);
  }
  if (rv == 0 && a->tls_ca) {
    rv = rp_config_set_string(cfg, RP_CONFIG_TLS_CA, a->tls_ca);
  }
  if (rv == 0 && a->tls_name) {
    rv = rp_config_set_string(cfg, RP_CONFIG_TLS_NAME, a->tls_name);
  }
  if (rv == 0 && a->resolver_list) {
    rv = rp_config_set_string(cfg, RP_CONFIG_LIST_FILE, a->resolver_list);
  }
  if (rv == 0 && a->resolver_list) {
    /* A resolver list means discovery: add "auto" unless it is there. */
    int has_auto = 0;
    for (i = 0; i < cfg->nresolvers; ++i) {
      has_auto |= cfg->resolvers[i].scheme == RP_SCHEME_AUTO;
    }
    if (!has_auto) {
      /* The list alone: nothing else is probed (no /etc/resolv.conf, no
         bundled public resolvers); "-r auto" asks for those. */
      cfg->discovery.system = 0;
      cfg->discovery.bundled = 0;
      rv = rp_config_add_resolver(cfg, "auto", "command line",
                                  "--resolver-list", err, errlen);
    }
  }
  if (a->no_system) {
    cfg->discovery.system = 0;
  }
  if (a->no_bundled) {
    cfg->discovery.bundled = 0;
  }
  return rv;
}

int cli_check_config(const cli_args *a, rp_config *cfg, char *err,
                     size_t errlen) {
  if (cfg->nresolvers == 0) {
    snprintf(err, errlen,
             "no resolvers: give -r URL, --resolvers-file FILE or --config "
             "FILE");
    return RP_ERR_CONFIG;
  }
  if (cli_merge_duplicates(cfg) != 0) {
    return RP_ERR_NOMEM;
  }
  if (!a->allow_remote && !rp_config_listen_is_loopback(cfg)) {
    char host[64];

    rp_net_format_sockaddr(&cfg->listen, host, sizeof(host));
    snprintf(err, errlen,
             "%s: listen address %s is not a loopback address: anyone who "
             "reaches it could use the pool as an open resolver; add "
             "--allow-remote to listen there anyway",
             a->listen ? "command line: --listen" : a->config_file,
             a->listen ? a->listen : host);
    return RP_ERR_CONFIG;
  }
  if (cfg->tls_ca && access(cfg->tls_ca, R_OK) != 0) {
    /* Checked whether or not a DoT/DoH resolver will load it: a CA file
       that is not there is a mistake to hear of now. */
    snprintf(err, errlen, "%s: %s: cannot read %s: %s",
             a->tls_ca ? "command line" : a->config_file,
             a->tls_ca ? "--tls-ca" : "tls_ca", cfg->tls_ca, strerror(errno));
    return RP_ERR_CONFIG;
  }
  if (cfg->scores_file) {
    char what[512];

    snprintf(what, sizeof(what), "%s: %s",
             a->scores ? "command line" : a->config_file,
             a->scores ? "--scores" : "scores_file");
    if (cli_check_writable(cfg->scores_file, what, err, errlen) != 0) {
      return RP_ERR_CONFIG;
    }
  }
  return 0;
}

void cli_free_args(cli *c) {
  free(c->args.resolvers);
  free(c->args.sets);
  free(c->args.files);
  c->args.resolvers = c->args.sets = c->args.files = NULL;
}
