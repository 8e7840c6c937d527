// Memory blocks of tasks (a Task and its copy of the compiler's data, one
// block each): a small per-thread cache of freed blocks in front of the C
// allocator. Tasks are 64-byte aligned (the libomp ABI's task header is),
// and glibc's aligned allocation bypasses its own thread cache: every task
// cost an aligned malloc and a free that fragment the heap (callgrind: ~770
// of ~1,360 instructions per clang task at one thread, bench/omp).
//
// A block is cached by the thread that frees it (the one that finished the
// task's last reference), in a list per size class (multiples of 64 bytes up
// to 2 KiB), at most kCachedBytes per thread; it is reused by the next task
// of that class that thread creates. A full cache hands a whole list to a
// depot shared by the threads, where a thread that ran out of blocks of that
// class takes it (one thread creating tasks that another finishes gets its
// blocks back a list at a time). The cache is freed when the thread exits.
// Dependence nodes (tasks.hpp's DepNode) come from here too. In an
// AddressSanitizer build nothing is cached (a use after free of a task must
// stay visible).
#pragma once
#include <cstddef>
#include <cstdint>

namespace canopy::omp {

// At least `size` bytes aligned to `align`; *size_class: what task_block_free needs.
void* task_block_alloc(std::size_t size, std::size_t align, std::uint8_t* size_class);
// Gives back a block of task_block_alloc with its size class.
void task_block_free(void* block, std::uint8_t size_class);

}  // namespace canopy::omp
