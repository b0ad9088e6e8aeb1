/*
 * pq.h: an intrusive binary min-heap (after ngtcp2 lib/ngtcp2_pq.h).
 *
 * An entry (rp_pq_entry) is embedded in its owner; the comparator gets
 * the owner back with rp_container_of. The heap stores pointers only and
 * frees nothing it stores. Capacity is reserved up front
 * (rp_pq_reserve) so that pushes on the hot path never allocate.
 */
#ifndef RP_CORE_PQ_H
#define RP_CORE_PQ_H

#include "respool.h"

#include <stddef.h>

/* RP_PQ_NONE is the index of an entry that is in no heap. */
#define RP_PQ_NONE SIZE_MAX

typedef struct rp_pq_entry {
  /* index is the position in the heap, or RP_PQ_NONE. */
  size_t index;
} rp_pq_entry;

/* rp_pq_less returns non-zero if |a| must come out before |b|. */
typedef int (*rp_pq_less)(const rp_pq_entry *a, const rp_pq_entry *b);

typedef struct rp_pq {
  /* q is the array of entries, |cap| long. */
  rp_pq_entry **q;
  /* len is the number of entries in the heap. */
  size_t len;
  /* cap is the number of slots of |q|. */
  size_t cap;
  rp_pq_less less;
  const rp_mem *mem;
} rp_pq;

/* rp_pq_entry_init marks |pe| as in no heap. */
static inline void rp_pq_entry_init(rp_pq_entry *pe) { pe->index = RP_PQ_NONE; }

/* rp_pq_entry_queued returns 1 if |pe| is in a heap. */
static inline int rp_pq_entry_queued(const rp_pq_entry *pe) {
  return pe->index != RP_PQ_NONE;
}

/* rp_pq_init initialises an empty heap ordered by |less| that allocates
   with |mem|. It allocates nothing. */
void rp_pq_init(rp_pq *pq, rp_pq_less less, const rp_mem *mem);

/* rp_pq_free frees the array (not the entries). */
void rp_pq_free(rp_pq *pq);

/* rp_pq_reserve makes room for at least |n| entries. Returns 0 or
   RP_ERR_NOMEM (the heap is then unchanged). */
int rp_pq_reserve(rp_pq *pq, size_t n);

/* rp_pq_push inserts |pe|, which must be in no heap. Returns 0, or
   RP_ERR_NOMEM when the heap must grow and cannot. */
int rp_pq_push(rp_pq *pq, rp_pq_entry *pe);

/* rp_pq_top returns the first entry, or NULL when empty. */
static inline rp_pq_entry *rp_pq_top(const rp_pq *pq) {
  return pq->len ? pq->q[0] : NULL;
}

/* rp_pq_pop removes the first entry. The heap must not be empty. */
void rp_pq_pop(rp_pq *pq);

/* rp_pq_remove removes |pe| if it is in the heap (no-op otherwise). */
void rp_pq_remove(rp_pq *pq, rp_pq_entry *pe);

/* rp_pq_update restores the order after |pe|'s key changed. */
void rp_pq_update(rp_pq *pq, rp_pq_entry *pe);

#endif /* RP_CORE_PQ_H */
