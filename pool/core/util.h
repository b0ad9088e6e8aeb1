/*
 * util.h: small internal helpers of the pool core (not public API).
 *
 * Intrusive doubly linked lists (libuv src/queue.h style, with a
 * sentinel), container_of, and the unreachable marker.
 */
#ifndef RP_CORE_UTIL_H
#define RP_CORE_UTIL_H

#include <stddef.h>
#include <stdint.h>

/* rp_container_of returns the struct of |type| whose |member| is at
   |ptr|. */
#define rp_container_of(ptr, type, member)                                     \
  ((type *)(void *)((char *)(ptr)-offsetof(type, member)))

/* rp_container_of_const is rp_container_of for a const |ptr|. */
#define rp_container_of_const(ptr, type, member)                               \
  ((const type *)(const void *)((const char *)(ptr)-offsetof(type, member)))

/* rp_unreachable marks a path that the invariants rule out. Reaching it
   is a bug, so the process aborts there, as ngtcp2's unreachable does,
   instead of running on into undefined behaviour. The core prints
   nothing (no stdio), so the place is kept in rp_unreachable_file and
   rp_unreachable_line for the core dump and the debugger. */
#define rp_unreachable() rp_unreachable_at(__FILE__, __LINE__)

extern const char *volatile rp_unreachable_file;
extern volatile int rp_unreachable_line;

#if defined(__GNUC__)
__attribute__((noreturn, cold))
#endif
void rp_unreachable_at(const char *file, int line);

/* rp_list is a node of a circular intrusive list; a list head is a
   sentinel node pointing at itself when empty. */
typedef struct rp_list {
  struct rp_list *prev;
  struct rp_list *next;
} rp_list;

/* rp_list_init makes |l| an empty list (or a detached node). */
static inline void rp_list_init(rp_list *l) {
  l->prev = l;
  l->next = l;
}

/* rp_list_empty returns 1 if the list |l| has no node. */
static inline int rp_list_empty(const rp_list *l) { return l->next == l; }

/* rp_list_linked returns 1 if the node |n| is in some list. */
static inline int rp_list_linked(const rp_list *n) { return n->next != n; }

/* rp_list_push_back inserts |n| at the tail of |l|. */
static inline void rp_list_push_back(rp_list *l, rp_list *n) {
  n->prev = l->prev;
  n->next = l;
  l->prev->next = n;
  l->prev = n;
}

/* rp_list_push_front inserts |n| at the head of |l|. */
static inline void rp_list_push_front(rp_list *l, rp_list *n) {
  n->next = l->next;
  n->prev = l;
  l->next->prev = n;
  l->next = n;
}

/* rp_list_remove unlinks |n| and leaves it detached. */
static inline void rp_list_remove(rp_list *n) {
  n->prev->next = n->next;
  n->next->prev = n->prev;
  rp_list_init(n);
}

/* rp_list_splice moves every node of |from| to the end of |to|. */
static inline void rp_list_splice(rp_list *to, rp_list *from) {
  if (rp_list_empty(from)) {
    return;
  }
  from->next->prev = to->prev;
  to->prev->next = from->next;
  from->prev->next = to;
  to->prev = from->prev;
  rp_list_init(from);
}

#endif /* RP_CORE_UTIL_H */
