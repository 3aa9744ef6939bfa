/* The L2's miss classifier (private to sim/): a fully-associative LRU cache
 * of the L2's size, and the set of every line ever touched. */
#ifndef NPUSIM_SIM_L2_SHADOW_H
#define NPUSIM_SIM_L2_SHADOW_H

#include <stdint.h>

struct npu_l2_shadow;

/* capacity: lines of the fully-associative cache. NULL when out of memory. */
struct npu_l2_shadow *npu_l2_shadow_new(uint32_t capacity);
void npu_l2_shadow_free(struct npu_l2_shadow *s);
void npu_l2_shadow_reset(struct npu_l2_shadow *s);
/* Empties the fully-associative cache; keeps the first-touch history. */
void npu_l2_shadow_flush(struct npu_l2_shadow *s);

/* Records a touch of `line`: 1 if it is the first ever, 0 if not, -1 if the
 * history could not grow (out of memory): then classification stops. */
int npu_l2_shadow_first_touch(struct npu_l2_shadow *s, uint64_t line);
/* One access to the fully-associative LRU cache: 1 hit, 0 miss. A miss
 * installs the line only if `allocate`. */
int npu_l2_shadow_access(struct npu_l2_shadow *s, uint64_t line, int allocate);

#endif
