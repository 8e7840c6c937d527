// The libomp ABI's task object (kmp/task.cpp): what clang's code sees
// (kmp_task_t, followed by the task's private variables, then the block of
// pointers to its shared variables) and canopy's header in front of it.
#pragma once
#include <cstddef>

#include "../core/tasks.hpp"
#include "abi.hpp"

namespace canopy::omp::kmp {

using kmp_routine_entry_t = kmp_int32 (*)(kmp_int32, void*);
union kmp_cmplrdata_t {
  kmp_int32 priority;
  kmp_routine_entry_t destructors;
};
struct kmp_task_t {
  void* shareds;
  kmp_routine_entry_t routine;
  kmp_int32 part_id;
  kmp_cmplrdata_t data1;  // destructors
  kmp_cmplrdata_t data2;  // priority
};

// libomp's kmp_tasking_flags_t bits the compiler sets.
constexpr kmp_int32 kTaskTied = 1, kTaskFinal = 2, kTaskDestructors = 8, kTaskPriority = 32, kTaskDetachable = 64;

// In front of every kmp_task_t, in the core task's data block (one
// allocation): the core task, and what taskloop needs to copy the task.
struct alignas(64) TaskHead {
  Task* core = nullptr;
  kmp_int32 flags = 0;
  std::size_t sizeof_task = 0, sizeof_shareds = 0;
};

inline TaskHead* head_of(kmp_task_t* task) { return reinterpret_cast<TaskHead*>(task) - 1; }

// Allocates a task (__kmpc_omp_task_alloc's work).
kmp_task_t* alloc_task(kmp_int32 flags, std::size_t sizeof_task, std::size_t sizeof_shareds, kmp_routine_entry_t entry);
// Queues (or runs) an allocated task; `depend` in GCC's layout or null,
// `depend_flags` then kTaskFlagDepend (and kTaskFlagDependLen when the
// items' bytes follow the addresses).
void submit(kmp_task_t* task, void** depend, bool if_clause = true, unsigned depend_flags = 0);

}  // namespace canopy::omp::kmp
