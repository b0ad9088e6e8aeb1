/*
 * pq.c: intrusive binary min-heap.
 */
#include "pq.h"

#include <assert.h>

/* PQ_INITIAL_CAP is the first array size when a heap grows from 0. */
#define PQ_INITIAL_CAP 16

void rp_pq_init(rp_pq *pq, rp_pq_less less, const rp_mem *mem) {
  *pq = (rp_pq){.q = NULL, .len = 0, .cap = 0, .less = less, .mem = mem};
}

void rp_pq_free(rp_pq *pq) {
  if (pq->q) {
    pq->mem->free(pq->q, pq->mem->user_data);
  }
  pq->q = NULL;
  pq->len = 0;
  pq->cap = 0;
}

int rp_pq_reserve(rp_pq *pq, size_t n) {
  size_t ncap;
  rp_pq_entry **nq;

  if (n <= pq->cap) {
    return 0;
  }
  ncap = pq->cap ? pq->cap : PQ_INITIAL_CAP;
  while (ncap < n) {
    if (ncap > SIZE_MAX / 2 / sizeof(rp_pq_entry *)) {
      return RP_ERR_NOMEM;
    }
    ncap *= 2;
  }
  nq =
      pq->mem->realloc(pq->q, ncap * sizeof(rp_pq_entry *), pq->mem->user_data);
  if (nq == NULL) {
    return RP_ERR_NOMEM;
  }
  pq->q = nq;
  pq->cap = ncap;
  return 0;
}

static void pq_swap(rp_pq *pq, size_t i, size_t j) {
  rp_pq_entry *a = pq->q[i];
  rp_pq_entry *b = pq->q[j];

  pq->q[i] = b;
  b->index = i;
  pq->q[j] = a;
  a->index = j;
}

static void pq_bubble_up(rp_pq *pq, size_t index) {
  size_t parent;

  while (index != 0) {
    parent = (index - 1) / 2;
    if (!pq->less(pq->q[index], pq->q[parent])) {
      return;
    }
    pq_swap(pq, parent, index);
    index = parent;
  }
}

static void pq_bubble_down(rp_pq *pq, size_t index) {
  size_t i, j, minindex;

  for (;;) {
    j = index * 2 + 1;
    minindex = index;
    for (i = 0; i < 2; ++i, ++j) {
      if (j >= pq->len) {
        break;
      }
      if (pq->less(pq->q[j], pq->q[minindex])) {
        minindex = j;
      }
    }
    if (minindex == index) {
      return;
    }
    pq_swap(pq, index, minindex);
    index = minindex;
  }
}

int rp_pq_push(rp_pq *pq, rp_pq_entry *pe) {
  int rv;

  assert(pe->index == RP_PQ_NONE);
  if (pq->len == pq->cap) {
    rv = rp_pq_reserve(pq, pq->len + 1);
    if (rv != 0) {
      return rv;
    }
  }
  pq->q[pq->len] = pe;
  pe->index = pq->len;
  ++pq->len;
  pq_bubble_up(pq, pq->len - 1);
  return 0;
}

void rp_pq_pop(rp_pq *pq) {
  assert(pq->len);
  rp_pq_remove(pq, pq->q[0]);
}

void rp_pq_remove(rp_pq *pq, rp_pq_entry *pe) {
  size_t index = pe->index;

  if (index == RP_PQ_NONE) {
    return;
  }
  assert(index < pq->len && pq->q[index] == pe);
  pe->index = RP_PQ_NONE;
  --pq->len;
  if (index == pq->len) {
    return;
  }
  pq->q[index] = pq->q[pq->len];
  pq->q[index]->index = index;
  pq_bubble_up(pq, index);
  pq_bubble_down(pq, pq->q[index]->index);
}

void rp_pq_update(rp_pq *pq, rp_pq_entry *pe) {
  size_t index = pe->index;

  if (index == RP_PQ_NONE) {
    return;
  }
  pq_bubble_up(pq, index);
  pq_bubble_down(pq, pe->index);
}
