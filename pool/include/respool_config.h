/*
 * respool_config.h: the pool's configuration (prefix rp_config_), part
 * of the public API (rp_net_options.config takes one; pool/net/config*.c
 * implement it).
 *
 * This module owns reading the smart_pool object of DESIGN.md section 4
 * from JSON (cJSON) and the resolver URLs of the command line. The result
 * is an rp_config: every field remembers whether it was given, so that
 * rp_config_apply overwrites only those fields of an rp_settings that the
 * caller filled with rp_settings_default for the right kind first. This
 * module does not link the core.
 *
 * A file holds either the smart_pool object itself, `true`, or an
 * outbound-like object with a "smart_pool" member (then "resolvers" and
 * "type" of that object are read too and its other members, which belong
 * to the tunnel, are ignored). Every error names the source (file name),
 * the field path and the bad value.
 */
#ifndef RESPOOL_CONFIG_H
#define RESPOOL_CONFIG_H

#include "respool.h"

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/socket.h>

/* RP_CONFIG_ERRLEN is a comfortable size for error message buffers. */
#define RP_CONFIG_ERRLEN 512
/* RP_CONFIG_MAX_HOST is the longest host name or address, with NUL. */
#define RP_CONFIG_MAX_HOST 256
/* RP_CONFIG_MAX_PATH is the longest DoH path, with NUL. */
#define RP_CONFIG_MAX_PATH 256
/* RP_CONFIG_MAX_TEXT is the longest resolver URL kept, with NUL. */
#define RP_CONFIG_MAX_TEXT 600
/* RP_CONFIG_MAX_DURATION_S bounds any duration, seconds (one day). */
#define RP_CONFIG_MAX_DURATION_S 86400.0
/* RP_CONFIG_MAX_RESOLVERS bounds the resolvers list of one config. */
#define RP_CONFIG_MAX_RESOLVERS 100000
/* RP_CONFIG_DEFAULT_PRETEST_DOMAIN is queried (type A) by the start-up
   check when the config names none. */
#define RP_CONFIG_DEFAULT_PRETEST_DOMAIN "example.com"

/* rp_scheme is the transport of one resolver URL. */
typedef enum rp_scheme {
  RP_SCHEME_UDP = 0, /* host or host:port: UDP, TCP on truncation */
  RP_SCHEME_TCP,     /* tcp://host:port */
  RP_SCHEME_DOT,     /* dot://host:853 or tls://host:853 */
  RP_SCHEME_DOH,     /* https://host[:port]/path */
  RP_SCHEME_AUTO     /* auto: discovery */
} rp_scheme;

/* rp_config_scheme_str returns a static name for |scheme|. */
const char *rp_config_scheme_str(rp_scheme scheme);

/* rp_config_resolver is one parsed resolver URL. */
typedef struct rp_config_resolver {
  /* scheme is the transport. */
  rp_scheme scheme;
  /* text is the URL as written (the key of its saved score). */
  char text[RP_CONFIG_MAX_TEXT];
  /* host is the address or name, without brackets ("" for auto). */
  char host[RP_CONFIG_MAX_HOST];
  /* tls_name is the name to verify (dot://NAME@IP:PORT or
     https://NAME@IP:PORT/path), or "". */
  char tls_name[RP_CONFIG_MAX_HOST];
  /* path is the DoH path ("/dns-query"), or "" for other schemes. */
  char path[RP_CONFIG_MAX_PATH];
  /* port is the port in host order (defaults: 53, 853, 443). */
  uint16_t port;
  /* has_addr is 1 if |host| is an IP literal, then |addr| holds it with
     |port|. UDP and TCP resolvers always have one. */
  int has_addr;
  /* addr is a sockaddr_in or sockaddr_in6. */
  struct sockaddr_storage addr;
} rp_config_resolver;

/* rp_config_discovery holds the discovery object (used by "auto"). */
typedef struct rp_config_discovery {
  /* country is an ISO 3166 code, "" when not set. */
  char country[8];
  /* sample_ranges is how many addresses of the country's ranges to try
     last (0 = none). */
  uint32_t sample_ranges;
  /* want is the number of working resolvers to keep. */
  uint32_t want;
  /* concurrency is how many checks run at once. */
  uint32_t concurrency;
  /* pace is the least gap between two checks, ns (0 = none). */
  rp_duration pace;
  /* timeout is how long one pretest waits, ns (0 = the default,
     RP_CONFIG_DISCOVERY_TIMEOUT). */
  rp_duration timeout;
  /* list_file is a file of candidate addresses, one a line, tried last
     (owned; NULL when not given). */
  char *list_file;
  /* data_file replaces the bundled resolver list (owned; NULL for the
     built-in path). */
  char *data_file;
  /* system is 0 to skip /etc/resolv.conf (1 by default). */
  int system;
  /* bundled is 0 to skip the bundled and global public resolvers (1 by
     default). */
  int bundled;
} rp_config_discovery;

/* RP_CONFIG_DISCOVERY_WANT and friends are the discovery defaults of
   DESIGN.md section 4. */
#define RP_CONFIG_DISCOVERY_WANT 10
#define RP_CONFIG_DISCOVERY_CONCURRENCY 100
/* RP_CONFIG_DISCOVERY_TIMEOUT is how long one discovery pretest waits:
   short, so that candidates that never answer do not hold a slot long. */
#define RP_CONFIG_DISCOVERY_TIMEOUT (1 * RP_SECONDS)

/* rp_config is a parsed configuration. Durations are ns, with
   RP_TSTAMP_UNSET meaning "not given"; integers use 0 for "not given"
   where 0 is invalid; has_* flags mark the others. */
typedef struct rp_config {
  /* mem allocated |resolvers| and the strings below. */
  const rp_mem *mem;
  /* enabled is the "enabled" field (1 when the object is `true`). */
  int enabled;
  /* has_kind is 1 when "kind" (or the outbound's "type") was given. */
  int has_kind;
  rp_kind kind;
  /* has_load_balance is 1 when load_balance was given. */
  int has_load_balance;
  rp_balance load_balance;
  rp_duration deadline;
  rp_duration per_attempt;
  rp_duration probe_interval;
  /* down_after is 0 when not given. */
  uint32_t down_after;
  /* duplicate is 0 when not given. */
  uint32_t duplicate;
  /* wait_for_token is -1 when not given, else 0 or 1. */
  int wait_for_token;
  rp_config_discovery discovery;
  /* has_listen is 1 when "listen" was given; |listen| then holds the
     address (port 0 = a free one). */
  int has_listen;
  struct sockaddr_storage listen;
  /* The strings below are NULL when not given; owned by the config.
     pretest_domain may be "" to switch the start-up check off. */
  char *scores_file;
  char *pretest_domain;
  char *tls_ca;
  char *tls_name;
  /* resolvers holds |nresolvers| entries (owned). */
  rp_config_resolver *resolvers;
  size_t nresolvers;
  size_t cap_resolvers;
  /* tuning holds |ntuning| "name=value" assignments of rp_settings
     fields (the "tuning" object, then --set; each owned), checked when
     added and applied after the fields above. */
  char **tuning;
  size_t ntuning;
} rp_config;

/* rp_config_init makes |cfg| an empty config (nothing given, enabled 0)
   that allocates with |mem| (NULL for rp_mem_default()). */
void rp_config_init(rp_config *cfg, const rp_mem *mem);

/* rp_config_free frees what |cfg| owns and leaves it empty. */
void rp_config_free(rp_config *cfg);

/* rp_config_string names an owned string field of rp_config. */
typedef enum rp_config_string {
  RP_CONFIG_SCORES_FILE,    /* scores_file */
  RP_CONFIG_PRETEST_DOMAIN, /* pretest_domain ("" switches the check off) */
  RP_CONFIG_TLS_CA,         /* tls_ca */
  RP_CONFIG_TLS_NAME,       /* tls_name */
  RP_CONFIG_LIST_FILE,      /* discovery.list_file */
  RP_CONFIG_DATA_FILE       /* discovery.data_file */
} rp_config_string;

/* rp_config_set_string replaces the string |field| of |cfg| with a copy
   of |value| (allocated with cfg->mem; the old one is freed), as a later
   source overriding an earlier one does. Returns 0, RP_ERR_NOMEM (the
   field unchanged) or RP_ERR_INVALID_ARGUMENT (no such field, or |value|
   NULL; the field unchanged). */
int rp_config_set_string(rp_config *cfg, rp_config_string field,
                         const char *value);

/* rp_config_parse_json parses |len| bytes of JSON |text| into |cfg|,
   which must be initialised; given fields overwrite earlier ones and
   resolvers are appended. |source| names the text in errors (a file
   name). On failure |err| (|errlen| bytes) receives a message naming
   |source|, the field path and the bad value, and |cfg| may hold part of
   the text. Returns 0, RP_ERR_CONFIG or RP_ERR_NOMEM. */
int rp_config_parse_json(rp_config *cfg, const char *text, size_t len,
                         const char *source, char *err, size_t errlen);

/* rp_config_load_file reads the file |path| and parses it as
   rp_config_parse_json does. Returns 0, RP_ERR_IO when the file cannot
   be read (|err| says why), RP_ERR_CONFIG or RP_ERR_NOMEM. */
int rp_config_load_file(rp_config *cfg, const char *path, char *err,
                        size_t errlen);

/* rp_config_read_stream reads |f| to its end into a NUL-ended buffer
   allocated with |mem| (NULL for rp_mem_default()): |*pbuf| (the caller
   frees it with mem->free) holds |*plen| bytes and the NUL. The config,
   the score cache and discovery's lists read their files with it.
   Returns 0, RP_ERR_FULL when the text and its NUL need more than
   |max_len| bytes, RP_ERR_IO on a read error or RP_ERR_NOMEM; nothing
   is left allocated on failure. */
int rp_config_read_stream(const rp_mem *mem, FILE *f, size_t max_len,
                          char **pbuf, size_t *plen);

/* rp_config_parse_resolver parses one resolver URL |spec| into |res|.
   Host names are accepted only for dot and https; UDP and TCP need an
   IP literal (IPv6 in brackets when a port follows). On failure |err|
   receives a message (without source or field) and RP_ERR_CONFIG is
   returned. */
int rp_config_parse_resolver(rp_config_resolver *res, const char *spec,
                             char *err, size_t errlen);

/* rp_config_add_resolver_file appends the resolvers of the list file
   |path|: one URL a line, '#' starts a comment, blank lines skipped. An
   error names the file and the line. Returns 0, RP_ERR_IO (cannot read),
   RP_ERR_CONFIG or RP_ERR_NOMEM. */
int rp_config_add_resolver_file(rp_config *cfg, const char *path, char *err,
                                size_t errlen);

/* rp_config_target is what a resolver reaches: two resolvers with equal
   targets are one (the strings are borrowed; "" when unused). */
typedef struct rp_config_target {
  rp_scheme scheme;
  const char *host;
  uint16_t port;
  const char *path;
  const char *tls_name;
} rp_config_target;

/* rp_config_target_of returns |r|'s target (pointing into |r|). */
rp_config_target rp_config_target_of(const rp_config_resolver *r);

/* rp_config_target_cmp orders targets (transport, host, port, DoH path,
   TLS name); 0 when equal. */
int rp_config_target_cmp(const rp_config_target *a, const rp_config_target *b);

/* rp_config_dup_fn is told of a resolver dropped as a duplicate: |dup|
   as written, |kept| the earlier entry kept in its place. */
typedef void (*rp_config_dup_fn)(const char *dup, const char *kept,
                                 void *user_data);

/* rp_config_merge_duplicates drops every resolver that names the same
   transport, address (or host), port, DoH path and TLS name as an earlier
   one ("8.8.8.8", "8.8.8.8:53" and "udp://8.8.8.8:53" are one resolver;
   a second "auto" is dropped too), calling |fn| (may be NULL) for each;
   the others keep their order. Returns how many were dropped, or
   (size_t)-1 when out of memory (|cfg| unchanged). */
size_t rp_config_merge_duplicates(rp_config *cfg, rp_config_dup_fn fn,
                                  void *user_data);

/* rp_config_listen_is_loopback returns 1 if |cfg| listens on a loopback
   address (127.0.0.0/8 or ::1), as it does by default. */
int rp_config_listen_is_loopback(const rp_config *cfg);

/* rp_config_add_resolver parses |spec| and appends it to |cfg|. |source|
   and |field| name it in errors ("command line", "-r"). Returns 0,
   RP_ERR_CONFIG or RP_ERR_NOMEM. */
int rp_config_add_resolver(rp_config *cfg, const char *spec, const char *source,
                           const char *field, char *err, size_t errlen);

/* RP_CONFIG_MAX_TUNING bounds the number of tuning assignments. */
#define RP_CONFIG_MAX_TUNING 256

/* rp_config_add_tuning checks |assignment| ("name=value", a field of
   rp_settings by name: rp_settings_set) and appends a copy to |cfg|.
   Returns 0, RP_ERR_CONFIG with |err| naming the field and the value, or
   RP_ERR_NOMEM. */
int rp_config_add_tuning(rp_config *cfg, const char *assignment, char *err,
                         size_t errlen);

/* rp_config_parse_duration parses "300ms", "2s", "1.5s", "1m" or "500us"
   into |*pd| ns. Returns 0 or RP_ERR_CONFIG (empty, no unit, unknown
   unit, negative, zero when |allow_zero| is 0, or overflow). */
int rp_config_parse_duration(const char *text, int allow_zero, rp_duration *pd);

/* rp_config_parse_kind parses "dnstt", "masterdns" or "generic". Returns
   0 or RP_ERR_CONFIG. */
int rp_config_parse_kind(const char *text, rp_kind *pkind);

/* rp_config_parse_listen parses "127.0.0.1:5353", "127.0.0.1", ":5353"
   (127.0.0.1) or "[::1]:53" into |*addr|. Returns 0 or RP_ERR_CONFIG. */
int rp_config_parse_listen(const char *text, struct sockaddr_storage *addr);

/* rp_config_apply overwrites the fields of |settings| that |cfg| gives
   (load_balance, deadline, per_attempt, probe_interval, down_after,
   duplicate, wait_for_token, then the tuning assignments in order). Call
   rp_settings_default for the kind first. */
void rp_config_apply(const rp_config *cfg, rp_settings *settings);

/* rp_config_kind_str returns "generic", "dnstt" or "masterdns". */
const char *rp_config_kind_str(rp_kind kind);

/* rp_config_balance_str returns the config name of |balance|. */
const char *rp_config_balance_str(rp_balance balance);

#endif /* RESPOOL_CONFIG_H */
