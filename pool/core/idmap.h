/*
 * idmap.h: the upstream ID space: (resolver, 16-bit ID) -> try.
 *
 * The core owns the 16-bit DNS ID space of each resolver. One open
 * addressing table (linear probing, backward-shift deletion) maps the
 * pair to the try that uses it, for every resolver at once, so memory
 * does not grow with the number of resolvers times 65536. The table
 * starts small (RP_IDMAP_START_SLOTS) and grows fourfold, rehashing,
 * when it is half full, up to room for every try the pool may have open
 * (rp_idmap_init's |n|): the IDs are random, so each lookup touches a
 * random slot, and a table sized for the tries really open stays in the
 * cache (at 200 queries outstanding, 16 KiB instead of 4 MiB: measured
 * 4.6 % of the relay's CPU in rp_idmap_insert before, mostly misses).
 */
#ifndef RP_CORE_IDMAP_H
#define RP_CORE_IDMAP_H

#include "respool.h"

/* RP_IDMAP_PROBE in rp_idmap_value.query marks a resolver's probe. */
#define RP_IDMAP_PROBE UINT32_MAX

typedef struct rp_idmap_value {
  /* query is the query slot, or RP_IDMAP_PROBE. */
  uint32_t query;
  /* try_index is the try within the query. */
  uint32_t try_index;
} rp_idmap_value;

typedef struct rp_idmap_slot {
  /* key is (resolver slot + 1) << 16 | id; 0 = empty. */
  uint64_t key;
  rp_idmap_value value;
} rp_idmap_slot;

typedef struct rp_idmap {
  rp_idmap_slot *slots;
  /* mask is the number of slots - 1 (a power of two). */
  size_t mask;
  /* shift is 64 - log2(slots): the home slot is the top bits of the
     Fibonacci hash (the low bits of the product mix poorly). */
  unsigned shift;
  /* len is the number of keys; limit the most before the table grows
     (half full); max the most keys ever (rp_idmap_init's n). */
  size_t len;
  size_t limit;
  size_t max;
  const rp_mem *mem;
} rp_idmap;

/* rp_idmap_init makes a map for at most |n| keys (the first table is
   smaller; it grows as keys come). Returns 0, RP_ERR_NOMEM, or
   RP_ERR_INVALID_ARGUMENT when |n| is too large. */
int rp_idmap_init(rp_idmap *map, size_t n, const rp_mem *mem);

/* rp_idmap_free frees the table. */
void rp_idmap_free(rp_idmap *map);

/* rp_idmap_get returns the value of (|res|, |id|) or NULL; the pointer is
   good until the map next changes. */
const rp_idmap_value *rp_idmap_get(const rp_idmap *map, uint32_t res,
                                   uint16_t id);

/* rp_idmap_put adds (|res|, |id|) -> |value|; the key must be absent.
   Returns 0, RP_ERR_FULL when the map holds |n| keys, or RP_ERR_NOMEM
   when it could not grow. */
int rp_idmap_put(rp_idmap *map, uint32_t res, uint16_t id,
                 rp_idmap_value value);

/* rp_idmap_insert adds (|res|, |id|) -> |value| if the key is absent,
   with one probe sequence (rp_idmap_get then rp_idmap_put walk it
   twice). Returns 0 when added, 1 when the key is already there (the
   map is unchanged), RP_ERR_FULL or RP_ERR_NOMEM as rp_idmap_put. */
int rp_idmap_insert(rp_idmap *map, uint32_t res, uint16_t id,
                    rp_idmap_value value);

/* rp_idmap_del removes (|res|, |id|) if present. */
void rp_idmap_del(rp_idmap *map, uint32_t res, uint16_t id);

#endif /* RP_CORE_IDMAP_H */
