/*
 * sim_heap.h: the simulator's event heap, ordered by (ts, seq).
 *
 * Every event of the simulation (an answer leaving a simulated resolver,
 * a client query, a profile change, a stats sample) waits in this binary
 * min-heap until its virtual time. Two events at the same time leave in
 * the order they were pushed: each push takes the next sequence number,
 * and the heap compares (ts, seq), so a run never depends on the heap's
 * internal layout and the same seed gives the same trace (libuv's timers
 * tie on start_id the same way).
 *
 * Events are stored by value (they are small); the heap owns its array
 * and nothing else.
 */
#ifndef SIM_HEAP_H
#define SIM_HEAP_H

#include "respool.h"

#include <stddef.h>
#include <stdint.h>

/* sim_event is one scheduled event. The meaning of |kind|, |a|, |b| and
   |c| belongs to the driver (sim.c). */
typedef struct sim_event {
  /* ts is the virtual time the event happens at, ns. */
  rp_tstamp ts;
  /* seq is the push order, set by sim_heap_push; it breaks ties. */
  uint64_t seq;
  /* kind is the driver's event type. */
  uint32_t kind;
  /* a is a small argument (a resolver or worker index). */
  uint32_t a;
  /* b is a large argument (a client serial). */
  uint64_t b;
  /* c is another small argument (a packet slot, a verdict). */
  uint32_t c;
} sim_event;

/* sim_heap is a growable binary min-heap of sim_event. */
typedef struct sim_heap {
  /* events holds |len| events in heap order; |cap| allocated. */
  sim_event *events;
  size_t len;
  size_t cap;
  /* next_seq is the sequence number of the next push. */
  uint64_t next_seq;
  /* mem allocates |events|. */
  const rp_mem *mem;
} sim_heap;

/* sim_heap_init starts an empty heap that allocates with |mem| (NULL for
   rp_mem_default()). It allocates nothing yet. */
void sim_heap_init(sim_heap *heap, const rp_mem *mem);

/* sim_heap_free frees the heap's array. The heap may be re-initialised
   afterwards. */
void sim_heap_free(sim_heap *heap);

/* sim_heap_push copies |ev| into the heap, setting its sequence number.
   Returns 0 or RP_ERR_NOMEM (the heap is then unchanged). */
int sim_heap_push(sim_heap *heap, const sim_event *ev);

/* sim_heap_top returns the earliest event without removing it, or NULL
   when the heap is empty. The pointer is valid until the next push or
   pop. */
const sim_event *sim_heap_top(const sim_heap *heap);

/* sim_heap_pop removes the earliest event and copies it to |*pev|.
   Returns 0, or RP_ERR_NOT_FOUND when the heap is empty. */
int sim_heap_pop(sim_heap *heap, sim_event *pev);

/* sim_heap_take_seq takes the next sequence number without a push: an
   event kept outside the heap (a process's timer) gets the place in the
   order a push would have given it. */
uint64_t sim_heap_take_seq(sim_heap *heap);

/* sim_heap_len returns the number of events waiting. */
size_t sim_heap_len(const sim_heap *heap);

#endif /* SIM_HEAP_H */
