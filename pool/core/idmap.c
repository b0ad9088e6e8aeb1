/*
 * idmap.c: open addressing map of upstream IDs.
 */
#include "idmap.h"

/* IDMAP_HASH_MULT is the 64-bit golden ratio (Fibonacci hashing). */
#define IDMAP_HASH_MULT 0x9e3779b97f4a7c15ULL
/* IDMAP_LOAD_DIV: the table holds at most slots / IDMAP_LOAD_DIV keys. */
#define IDMAP_LOAD_DIV 2
/* IDMAP_MAX_SLOTS bounds the table (2^30 slots). */
#define IDMAP_MAX_SLOTS ((size_t)1 << 30)

static uint64_t idmap_key(uint32_t res, uint16_t id) {
  return (((uint64_t)res + 1) << 16) | id;
}

static size_t idmap_home(const rp_idmap *map, uint64_t key) {
  return (size_t)((key * IDMAP_HASH_MULT) >> map->shift) & map->mask;
}

int rp_idmap_init(rp_idmap *map, size_t n, const rp_mem *mem) {
  size_t nslots = 16;
  unsigned bits = 4;

  while (nslots / IDMAP_LOAD_DIV < n) {
    if (nslots >= IDMAP_MAX_SLOTS) {
      return RP_ERR_INVALID_ARGUMENT;
    }
    nslots *= 2;
    ++bits;
  }
  map->slots = mem->calloc(nslots, sizeof(rp_idmap_slot), mem->user_data);
  if (map->slots == NULL) {
    return RP_ERR_NOMEM;
  }
  map->mask = nslots - 1;
  map->shift = 64u - bits;
  map->len = 0;
  map->limit = nslots / IDMAP_LOAD_DIV;
  map->mem = mem;
  return 0;
}

void rp_idmap_free(rp_idmap *map) {
  if (map->slots) {
    map->mem->free(map->slots, map->mem->user_data);
  }
  map->slots = NULL;
}

const rp_idmap_value *rp_idmap_get(const rp_idmap *map, uint32_t res,
                                   uint16_t id) {
  uint64_t key = idmap_key(res, id);
  size_t i = idmap_home(map, key);

  while (map->slots[i].key != 0) {
    if (map->slots[i].key == key) {
      return &map->slots[i].value;
    }
    i = (i + 1) & map->mask;
  }
  return NULL;
}

int rp_idmap_put(rp_idmap *map, uint32_t res, uint16_t id,
                 rp_idmap_value value) {
  uint64_t key = idmap_key(res, id);
  size_t i;

  if (map->len >= map->limit) {
    return RP_ERR_FULL;
  }
  i = idmap_home(map, key);
  while (map->slots[i].key != 0) {
    i = (i + 1) & map->mask;
  }
  map->slots[i] = (rp_idmap_slot){.key = key, .value = value};
  ++map->len;
  return 0;
}

int rp_idmap_insert(rp_idmap *map, uint32_t res, uint16_t id,
                    rp_idmap_value value) {
  uint64_t key = idmap_key(res, id);
  size_t i = idmap_home(map, key);

  while (map->slots[i].key != 0) {
    if (map->slots[i].key == key) {
      return 1;
    }
    i = (i + 1) & map->mask;
  }
  if (map->len >= map->limit) {
    return RP_ERR_FULL;
  }
  map->slots[i] = (rp_idmap_slot){.key = key, .value = value};
  ++map->len;
  return 0;
}

void rp_idmap_del(rp_idmap *map, uint32_t res, uint16_t id) {
  uint64_t key = idmap_key(res, id);
  size_t i = idmap_home(map, key), j, home;

  while (map->slots[i].key != key) {
    if (map->slots[i].key == 0) {
      return;
    }
    i = (i + 1) & map->mask;
  }
  /* Backward-shift deletion keeps every probe chain unbroken. */
  j = i;
  for (;;) {
    j = (j + 1) & map->mask;
    if (map->slots[j].key == 0) {
      break;
    }
    home = idmap_home(map, map->slots[j].key);
    if (((j - home) & map->mask) >= ((j - i) & map->mask)) {
      map->slots[i] = map->slots[j];
      i = j;
    }
  }
  map->slots[i].key = 0;
  --map->len;
}
