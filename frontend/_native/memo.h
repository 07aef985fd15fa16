/* The recorder's memos: small caches keyed by addresses or bits, looked up on every
 * recorded op. Each is set-associative (MEMO_WAYS entries per set) with a multiplicative
 * hash: a direct-mapped table with a weak hash let two hot keys (two code objects, two
 * constants) share a slot and evict each other on every op, so a graph's recording cost
 * depended on where the allocator happened to put them (a 30-op chain took 34 or 54 us
 * with the working directory as the only change). The GIL guards them. */
#ifndef STABLEJIT_NATIVE_MEMO_H
#define STABLEJIT_NATIVE_MEMO_H

#include <stddef.h>
#include <stdint.h>

#define MEMO_WAYS 4

/* the first entry of key h's set in a table of `sets` sets (a power of two) */
static inline size_t
memo_set(uint64_t h, size_t sets)
{
    h *= 0x9E3779B97F4A7C15ull; /* Fibonacci hashing: the high bits mix every input bit */
    return (size_t)((h >> 32) & (sets - 1)) * MEMO_WAYS;
}

/* the way to fill on a miss: the first empty one (`empty` < 0 where none is), else
 * one in turn */
static inline size_t
memo_victim(size_t set, int empty)
{
    static unsigned clock;
    return set + (empty >= 0 ? (size_t)empty : (size_t)(clock++ % MEMO_WAYS));
}

#endif
