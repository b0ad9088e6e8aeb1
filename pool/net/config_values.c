/*
 * config_values.c: the value parsers of respool_config.h: durations, kinds,
 * resolver URLs and listen addresses.
 *
 * IMPLEMENTATION NOTES
 * - UDP and TCP resolvers must be IP literals: a DNS resolver pool that
 *   first needs DNS to find its resolvers would depend on itself. DoT and
 *   DoH may name a host; resolving it is the transport's job.
 */
#include "respool_config.h"

#include <arpa/inet.h>
#include <cjson/cJSON.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* CONFIG_PORT_DNS, CONFIG_PORT_DOT and CONFIG_PORT_HTTPS are the
   default ports of the schemes (RFC 1035, RFC 7858, RFC 8484). */
#define CONFIG_PORT_DNS 53
#define CONFIG_PORT_DOT 853
#define CONFIG_PORT_HTTPS 443
/* CONFIG_PREFIX_IS tests whether |s| starts with the literal |lit|. */
#define CONFIG_PREFIX_IS(s, lit) (strncmp((s), (lit), sizeof(lit) - 1) == 0)
/* CONFIG_PREFIX_LEN is the length of the literal |lit|. */
#define CONFIG_PREFIX_LEN(lit) (sizeof(lit) - 1)

int rp_config_parse_duration(const char *text, int allow_zero,
                             rp_duration *pd) {
  rp_duration d;

  /* The core's syntax ("250ms", "1m30s", "1h"), with a unit always. */
  if (text == NULL || strcmp(text, "0") == 0 ||
      rp_duration_parse(text, &d) != 0 ||
      d > (rp_duration)(RP_CONFIG_MAX_DURATION_S * (double)RP_SECONDS) ||
      (d == 0 && !allow_zero)) {
    return RP_ERR_CONFIG;
  }
  *pd = d;
  return 0;
}

int rp_config_parse_kind(const char *text, rp_kind *pkind) {
  if (strcmp(text, "dnstt") == 0) {
    *pkind = RP_KIND_DNSTT;
  } else if (strcmp(text, "masterdns") == 0) {
    *pkind = RP_KIND_MASTERDNS;
  } else if (strcmp(text, "generic") == 0) {
    *pkind = RP_KIND_GENERIC;
  } else if (strcmp(text, "auto") == 0) {
    *pkind = RP_KIND_AUTO;
  } else {
    return RP_ERR_CONFIG;
  }
  return 0;
}

/* config_parse_port parses a decimal port 1..65535 (0 when |allow_zero|)
   of exactly |len| bytes. */
static int config_parse_port(const char *s, size_t len, int allow_zero,
                             uint16_t *pport) {
  unsigned long v = 0;
  size_t i;
  if (len == 0 || len > 5) {
    return RP_ERR_CONFIG;
  }
  for (i = 0; i < len; ++i) {
    if (s[i] < '0' || s[i] > '9') {
      return RP_ERR_CONFIG;
    }
    v = v * 10 + (unsigned long)(s[i] - '0');
  }
  if (v > UINT16_MAX || (v == 0 && !allow_zero)) {
    return RP_ERR_CONFIG;
  }
  *pport = (uint16_t)v;
  return 0;
}

/* config_ip_to_addr stores the IP literal |host| with |port| in |addr|.
   Returns 1 if |host| is an IPv4 or IPv6 literal, else 0. */
static int config_ip_to_addr(const char *host, uint16_t port,
                             struct sockaddr_storage *addr) {
  struct sockaddr_in sin = {.sin_family = AF_INET, .sin_port = htons(port)};
  struct sockaddr_in6 sin6 = {.sin6_family = AF_INET6,
                              .sin6_port = htons(port)};
  memset(addr, 0, sizeof(*addr));
  if (inet_pton(AF_INET, host, &sin.sin_addr) == 1) {
    memcpy(addr, &sin, sizeof(sin));
    return 1;
  }
  if (inet_pton(AF_INET6, host, &sin6.sin6_addr) == 1) {
    memcpy(addr, &sin6, sizeof(sin6));
    return 1;
  }
  return 0;
}

/* config_host_is_name returns 1 if |host| looks like a DNS host name. */
static int config_host_is_name(const char *host) {
  size_t i, n = strlen(host);
  if (n == 0 || n >= RP_CONFIG_MAX_HOST - 1) {
    return 0;
  }
  for (i = 0; i < n; ++i) {
    char c = host[i];
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
          (c >= '0' && c <= '9') || c == '-' || c == '.' || c == '_')) {
      return 0;
    }
  }
  return host[0] != '.' && host[0] != '-';
}

/* config_split_hostport splits |s| (|len| bytes: "h", "h:p", "[v6]" or
   "[v6]:p") into |host| and |*pport| (left alone when no port). */
static int config_split_hostport(const char *s, size_t len, char *host,
                                 uint16_t *pport, int allow_zero_port,
                                 const char **why) {
  const char *colon;
  size_t hlen;
  if (len == 0) {
    *why = "empty address";
    return RP_ERR_CONFIG;
  }
  if (s[0] == '[') {
    const char *close = memchr(s, ']', len);
    if (!close) {
      *why = "missing ]";
      return RP_ERR_CONFIG;
    }
    hlen = (size_t)(close - s - 1);
    if (hlen == 0 || hlen >= RP_CONFIG_MAX_HOST) {
      *why = "bad address";
      return RP_ERR_CONFIG;
    }
    memcpy(host, s + 1, hlen);
    host[hlen] = '\0';
    if ((size_t)(close - s) + 1 < len) {
      if (close[1] != ':' ||
          config_parse_port(close + 2, len - (size_t)(close - s) - 2,
                            allow_zero_port, pport) != 0) {
        *why = "bad port";
        return RP_ERR_CONFIG;
      }
    }
    return 0;
  }
  colon = memchr(s, ':', len);
  if (colon && memchr(colon + 1, ':', len - (size_t)(colon - s) - 1)) {
    /* A bare IPv6 literal without a port. */
    colon = NULL;
  }
  hlen = colon ? (size_t)(colon - s) : len;
  if (hlen == 0 || hlen >= RP_CONFIG_MAX_HOST) {
    *why = "bad address";
    return RP_ERR_CONFIG;
  }
  memcpy(host, s, hlen);
  host[hlen] = '\0';
  if (colon && config_parse_port(colon + 1, len - hlen - 1, allow_zero_port,
                                 pport) != 0) {
    *why = "bad port";
    return RP_ERR_CONFIG;
  }
  return 0;
}

int rp_config_parse_resolver(rp_config_resolver *res, const char *spec,
                             char *err, size_t errlen) {
  const char *rest = spec, *why = NULL, *slash, *at;
  size_t len;
  int rv = RP_ERR_CONFIG;

  memset(res, 0, sizeof(*res));
  len = strlen(spec);
  if (len == 0 || len >= RP_CONFIG_MAX_TEXT) {
    why = len == 0 ? "empty resolver" : "resolver too long";
    goto fail;
  }
  memcpy(res->text, spec, len + 1);

  if (strcmp(spec, "auto") == 0) {
    res->scheme = RP_SCHEME_AUTO;
    return 0;
  }
  if (CONFIG_PREFIX_IS(spec, "udp://")) {
    res->scheme = RP_SCHEME_UDP;
    rest = spec + CONFIG_PREFIX_LEN("udp://");
    res->port = CONFIG_PORT_DNS;
  } else if (CONFIG_PREFIX_IS(spec, "tcp://")) {
    res->scheme = RP_SCHEME_TCP;
    rest = spec + CONFIG_PREFIX_LEN("tcp://");
    res->port = CONFIG_PORT_DNS;
  } else if (CONFIG_PREFIX_IS(spec, "dot://") ||
             CONFIG_PREFIX_IS(spec, "tls://")) {
    res->scheme = RP_SCHEME_DOT;
    rest = spec + CONFIG_PREFIX_LEN("dot://");
    res->port = CONFIG_PORT_DOT;
  } else if (CONFIG_PREFIX_IS(spec, "https://")) {
    res->scheme = RP_SCHEME_DOH;
    rest = spec + CONFIG_PREFIX_LEN("https://");
    res->port = CONFIG_PORT_HTTPS;
  } else if (strstr(spec, "://")) {
    why = "unknown scheme (use host:port, tcp://, dot://, tls://, "
          "https:// or auto)";
    goto fail;
  } else {
    res->scheme = RP_SCHEME_UDP;
    res->port = CONFIG_PORT_DNS;
  }

  len = strlen(rest);
  if (res->scheme == RP_SCHEME_DOH) {
    slash = strchr(rest, '/');
    if (!slash) {
      why = "https resolver needs a path (https://host/dns-query)";
      goto fail;
    }
    if (strlen(slash) >= RP_CONFIG_MAX_PATH) {
      why = "path too long";
      goto fail;
    }
    memcpy(res->path, slash, strlen(slash) + 1);
    len = (size_t)(slash - rest);
  } else if (strchr(rest, '/')) {
    why = "unexpected path";
    goto fail;
  }
  if ((res->scheme == RP_SCHEME_DOT || res->scheme == RP_SCHEME_DOH) &&
      (at = memchr(rest, '@', len))) {
    size_t nlen = (size_t)(at - rest);
    if (nlen == 0 || nlen >= RP_CONFIG_MAX_HOST) {
      why = "bad TLS name";
      goto fail;
    }
    memcpy(res->tls_name, rest, nlen);
    res->tls_name[nlen] = '\0';
    if (!config_host_is_name(res->tls_name)) {
      why = "bad TLS name";
      goto fail;
    }
    len -= nlen + 1;
    rest = at + 1;
  }
  if (config_split_hostport(rest, len, res->host, &res->port, 0, &why) != 0) {
    goto fail;
  }
  res->has_addr = config_ip_to_addr(res->host, res->port, &res->addr);
  if (!res->has_addr) {
    if (res->scheme == RP_SCHEME_UDP || res->scheme == RP_SCHEME_TCP) {
      why = "bad address (UDP and TCP resolvers need an IP address)";
      goto fail;
    }
    if (!config_host_is_name(res->host)) {
      why = "bad host";
      goto fail;
    }
  }
  return 0;

fail:
  if (err && errlen) {
    snprintf(err, errlen, "%s (%s)", why ? why : "bad resolver", spec);
  }
  return rv;
}

int rp_config_parse_listen(const char *text, struct sockaddr_storage *addr) {
  char host[RP_CONFIG_MAX_HOST];
  uint16_t port = 0;
  const char *why;
  size_t len = strlen(text);
  if (len > 0 && text[0] == ':') {
    if (config_parse_port(text + 1, len - 1, 1, &port) != 0) {
      return RP_ERR_CONFIG;
    }
    return config_ip_to_addr("127.0.0.1", port, addr) ? 0 : RP_ERR_CONFIG;
  }
  if (config_split_hostport(text, len, host, &port, 1, &why) != 0) {
    return RP_ERR_CONFIG;
  }
  return config_ip_to_addr(host, port, addr) ? 0 : RP_ERR_CONFIG;
}
