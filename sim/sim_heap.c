/*
 * sim_heap.c: the (ts, seq)-ordered event heap (see sim_heap.h).
 *
 * IMPLEMENTATION NOTES
 * - A plain array 4-ary heap: push and pop are O(log n), with no
 *   allocation except when the array doubles. A simulation holds a few
 *   events per query in flight, so the array stays small.
 * - The order is total: (ts, seq) with seq unique, so ties never depend
 *   on the sift order and runs are reproducible.
 */
#include "sim_heap.h"

/* SIM_HEAP_ARITY is the children per node: a 4-ary heap is half as deep
   as a binary one, and a node's children share a cache line or two. */
#define SIM_HEAP_ARITY 4u

/* SIM_HEAP_INITIAL_CAP is the first allocation, in events. */
#define SIM_HEAP_INITIAL_CAP 256u

/* heap_before returns 1 if |x| must leave before |y|. */
static inline int heap_before(const sim_event *x, const sim_event *y) {
  if (x->ts != y->ts) {
    return x->ts < y->ts;
  }
  return x->seq < y->seq;
}

void sim_heap_init(sim_heap *heap, const rp_mem *mem) {
  *heap = (sim_heap){.events = NULL,
                     .len = 0,
                     .cap = 0,
                     .next_seq = 0,
                     .mem = mem ? mem : rp_mem_default()};
}

void sim_heap_free(sim_heap *heap) {
  if (heap->events) {
    heap->mem->free(heap->events, heap->mem->user_data);
  }
  heap->events = NULL;
  heap->len = 0;
  heap->cap = 0;
}

/* heap_grow doubles the array. Returns 0 or RP_ERR_NOMEM. */
static int heap_grow(sim_heap *heap) {
  size_t ncap = heap->cap ? heap->cap * 2 : SIM_HEAP_INITIAL_CAP;
  sim_event *nev;
  if (ncap < heap->cap || ncap > SIZE_MAX / sizeof(sim_event)) {
    return RP_ERR_NOMEM;
  }
  nev = heap->mem->realloc(heap->events, ncap * sizeof(sim_event),
                           heap->mem->user_data);
  if (!nev) {
    return RP_ERR_NOMEM;
  }
  heap->events = nev;
  heap->cap = ncap;
  return 0;
}

int sim_heap_push(sim_heap *heap, const sim_event *ev) {
  sim_event e;
  size_t i;
  int rv = 0;
  if (heap->len == heap->cap) {
    rv = heap_grow(heap);
    if (rv != 0) {
      return rv;
    }
  }
  /* Sift the hole up, then drop the event in: one copy per level. */
  e = *ev;
  e.seq = heap->next_seq++;
  i = heap->len++;
  while (i > 0) {
    size_t parent = (i - 1) / SIM_HEAP_ARITY;

    if (!heap_before(&e, &heap->events[parent])) {
      break;
    }
    heap->events[i] = heap->events[parent];
    i = parent;
  }
  heap->events[i] = e;
  return rv;
}

const sim_event *sim_heap_top(const sim_heap *heap) {
  return heap->len ? &heap->events[0] : NULL;
}

int sim_heap_pop(sim_heap *heap, sim_event *pev) {
  sim_event last;
  size_t i = 0;
  if (heap->len == 0) {
    return RP_ERR_NOT_FOUND;
  }
  *pev = heap->events[0];
  --heap->len;
  if (heap->len == 0) {
    return 0;
  }
  /* Sift the hole left at the root down along the earliest child, then
     drop the last event in: one copy per level. */
  last = heap->events[heap->len];
  for (;;) {
    size_t first = SIM_HEAP_ARITY * i + 1, end = first + SIM_HEAP_ARITY;
    size_t m = first, k;

    if (first >= heap->len) {
      break;
    }
    if (end > heap->len) {
      end = heap->len;
    }
    for (k = first + 1; k < end; ++k) {
      if (heap_before(&heap->events[k], &heap->events[m])) {
        m = k;
      }
    }
    if (!heap_before(&heap->events[m], &last)) {
      break;
    }
    heap->events[i] = heap->events[m];
    i = m;
  }
  heap->events[i] = last;
  return 0;
}

uint64_t sim_heap_take_seq(sim_heap *heap) { return heap->next_seq++; }

size_t sim_heap_len(const sim_heap *heap) { return heap->len; }
