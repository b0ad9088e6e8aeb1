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
/* The table starts at 2^IDMAP_START_BITS slots (room for 512 tries, 16
   KiB) and grows by 2^IDMAP_GROW_BITS. */
#define IDMAP_START_BITS 10u
#define IDMAP_START_SLOTS ((size_t)1 << IDMAP_START_BITS)
#define IDMAP_GROW_BITS 2u

static uint64_t idmap_key(uint32_t res, uint16_t id) {
  return (((uint64_t)res + 1) << 16) | id;
}

static size_t idmap_home(const rp_idmap *map, uint64_t key) {
  return (size_t)((key * IDMAP_HASH_MULT) >> map->shift) & map->mask;
}

/* idmap_alloc points |map| at a fresh table of 2^|bits| slots. */
static int idmap_alloc(rp_idmap *map, unsigned bits) {
  size_t nslots = (size_t)1 << bits;
  rp_idmap_slot *slots =
      map->mem->calloc(nslots, sizeof(rp_idmap_slot), map->mem->user_data);
  if (slots == NULL) {
    return RP_ERR_NOMEM;
  }
  map->slots = slots;
  map->mask = nslots - 1;
  map->shift = 64u - bits;
  map->limit = nslots / IDMAP_LOAD_DIV;
  if (map->limit > map->max) {
    map->limit = map->max;
  }
  return 0;
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
  if (nslots > IDMAP_START_SLOTS) {
    bits = IDMAP_START_BITS;
  }
  map->mem = mem;
  map->max = n;
  map->len = 0;
  return idmap_alloc(map, bits);
}

/* idmap_grow moves the keys to a table IDMAP_GROW_BITS bits larger, when
   the table is at its limit below max. Returns 0 when there is room for
   one more key, RP_ERR_FULL or RP_ERR_NOMEM (the table is unchanged). */
static int idmap_grow(rp_idmap *map) {
  rp_idmap old = *map;
  unsigned bits = 64u - map->shift + IDMAP_GROW_BITS;
  size_t i;

  if (map->len < map->limit) {
    return 0;
  }
  if (map->len >= map->max) {
    return RP_ERR_FULL;
  }
  /* No larger than room for max keys. */
  while (bits > 64u - map->shift + 1 &&
         ((size_t)1 << (bits - 1)) / IDMAP_LOAD_DIV >= map->max) {
    --bits;
  }
  if (idmap_alloc(map, bits) != 0) {
    *map = old;
    return RP_ERR_NOMEM;
  }
  for (i = 0; i <= old.mask; ++i) {
    if (old.slots[i].key != 0) {
      size_t j = idmap_home(map, old.slots[i].key);
      while (map->slots[j].key != 0) {
        j = (j + 1) & map->mask;
      }
      map->slots[j] = old.slots[i];
    }
  }
  map->mem->free(old.slots, map->mem->user_data);
  return map->len < map->limit ? 0 : RP_ERR_FULL;
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

/* idmap_place stores |key| in the first free slot of its probe run,
   growing the table first when it is at its load limit. */
static int idmap_place(rp_idmap *map, uint64_t key, rp_idmap_value value) {
  size_t i;

  if (map->len >= map->limit) {
    int rv = idmap_grow(map);
    if (rv != 0) {
      return rv;
    }
  }
  i = idmap_home(map, key);
  while (map->slots[i].key != 0) {
    i = (i + 1) & map->mask;
  }
  map->slots[i] = (rp_idmap_slot){.key = key, .value = value};
  ++map->len;
  return 0;
}

int rp_idmap_put(rp_idmap *map, uint32_t res, uint16_t id,
                 rp_idmap_value value) {
  return idmap_place(map, idmap_key(res, id), value);
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
  return idmap_place(map, key, value);
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
