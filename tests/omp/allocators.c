/* Runs on canopy's OpenMP runtime (LD_LIBRARY_PATH): the memory allocators.
   Every predefined allocator; omp_init_allocator's trait checks; alignment;
   pool_size exhaustion with each fallback (null_fb, default_mem_fb,
   allocator_fb, abort_fb); calloc / realloc within a
   pool; pinned (VmLck grows, and without the right to lock the fallback is
   taken); partition nearest / blocked / interleaved: every page of the
   block is where the partition says (move_pages), with no error reported;
   def-allocator-var (OMP_ALLOCATOR, omp_set_default_allocator) inherited by
   team threads and tasks; the allocate clause (GOMP_alloc). Exits non-zero
   on the first wrong result. Run with ALLOC_EXPECT_DEFAULT=<handle> and
   OMP_ALLOCATOR set to check that variable. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <omp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "omp_check.h"
const char* canopy_omp_alloc_error(void) __attribute__((weak));


#define ALIGNED(p, a) ((((uintptr_t)(p)) & ((a)-1)) == 0)
#define HEADER 32 /* canopy's block header, as libgomp's (core/alloc_memory.hpp) */
#define PLACED_OFFSET 48 /* a placed block: its mapping's 16-byte record, then the header */

static size_t page;

static omp_allocator_handle_t make(int n, const omp_alloctrait_t* t) {
  omp_allocator_handle_t a = omp_init_allocator(omp_default_mem_space, n, t);
  CHECK(a != omp_null_allocator);
  return a;
}

static void check_predefined(void) {
  const omp_allocator_handle_t all[] = {omp_default_mem_alloc, omp_large_cap_mem_alloc, omp_const_mem_alloc,
                                        omp_high_bw_mem_alloc, omp_low_lat_mem_alloc,   omp_cgroup_mem_alloc,
                                        omp_pteam_mem_alloc,   omp_thread_mem_alloc};
  for (unsigned i = 0; i < sizeof all / sizeof all[0]; ++i) {
    char* p = omp_alloc(1000, all[i]);
    CHECK(p && ALIGNED(p, 16));
    memset(p, 7, 1000);
    int* z = omp_calloc(100, sizeof(int), all[i]);
    CHECK(z);
    for (int k = 0; k < 100; ++k) CHECK(z[k] == 0);
    p = omp_realloc(p, 5000, all[i], all[i]);
    CHECK(p && p[999] == 7);
    omp_free(p, all[i]);
    omp_free(z, omp_null_allocator);
  }
  CHECK(omp_alloc(0, omp_default_mem_alloc) == NULL);
  CHECK(omp_aligned_alloc(3, 8, omp_default_mem_alloc) == NULL); /* not a power of two */
  /* Every memory space makes allocators. */
  const omp_memspace_handle_t spaces[] = {omp_default_mem_space, omp_large_cap_mem_space, omp_const_mem_space,
                                          omp_high_bw_mem_space, omp_low_lat_mem_space};
  for (unsigned i = 0; i < sizeof spaces / sizeof spaces[0]; ++i) {
    omp_allocator_handle_t a = omp_init_allocator(spaces[i], 0, NULL);
    CHECK(a != omp_null_allocator);
    void* p = omp_alloc(64, a);
    CHECK(p);
    omp_free(p, a);
    omp_destroy_allocator(a);
  }
}

static void check_trait_values(void) {
  /* Each trait's defined values are accepted, anything else makes no allocator. */
  const struct {
    omp_alloctrait_key_t key;
    omp_uintptr_t good, bad;
  } cases[] = {
      {omp_atk_sync_hint, omp_atv_private, omp_atv_all},
      {omp_atk_sync_hint, omp_atv_contended, 99},
      {omp_atk_alignment, 4096, 24},
      {omp_atk_alignment, 1, 0},
      {omp_atk_access, omp_atv_cgroup, omp_atv_private},
      {omp_atk_fallback, omp_atv_abort_fb, omp_atv_nearest},
      {omp_atk_pinned, omp_atv_true, 2},
      {omp_atk_partition, omp_atv_interleaved, omp_atv_null_fb},
      {omp_atk_partition, omp_atv_environment, 19},
  };
  for (unsigned i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
    omp_alloctrait_t t = {cases[i].key, cases[i].good};
    omp_allocator_handle_t a = omp_init_allocator(omp_default_mem_space, 1, &t);
    CHECK(a != omp_null_allocator);
    omp_destroy_allocator(a);
    t.value = cases[i].bad;
    CHECK(omp_init_allocator(omp_default_mem_space, 1, &t) == omp_null_allocator);
  }
  omp_alloctrait_t unknown = {(omp_alloctrait_key_t)42, 1};
  CHECK(omp_init_allocator(omp_default_mem_space, 1, &unknown) == omp_null_allocator);
  CHECK(omp_init_allocator((omp_memspace_handle_t)77, 0, NULL) == omp_null_allocator);
}

static void check_alignment(void) {
  omp_alloctrait_t t[] = {{omp_atk_alignment, 4096}};
  omp_allocator_handle_t a = make(1, t);
  for (int i = 0; i < 8; ++i) {
    void* p = omp_alloc(10 + i * 1000, a);
    CHECK(p && ALIGNED(p, 4096));
    void* q = omp_aligned_alloc(1 << 14, 100, a); /* the larger of the two alignments */
    CHECK(q && ALIGNED(q, 1 << 14));
    q = omp_realloc(q, 20000, a, a);
    CHECK(q && ALIGNED(q, 4096));
    omp_free(p, a);
    omp_free(q, a);
  }
  void* r = omp_aligned_calloc(256, 10, 10, omp_default_mem_alloc);
  CHECK(r && ALIGNED(r, 256));
  omp_free(r, omp_default_mem_alloc);
  omp_destroy_allocator(a);
}

/* A child process that must die of abort_fb's abort (SIGABRT). */
static void expect_abort(void (*fn)(void)) {
  fflush(NULL);
  pid_t pid = fork();
  CHECK(pid >= 0);
  if (pid == 0) {
    int devnull = open("/dev/null", 1);
    if (devnull >= 0) dup2(devnull, 2); /* the expected message */
    fn();
    _exit(0);
  }
  int st = 0;
  CHECK(waitpid(pid, &st, 0) == pid);
  CHECK(WIFSIGNALED(st) && WTERMSIG(st) == SIGABRT);
}

static void abort_fb_exhausted(void) {
  omp_alloctrait_t t[] = {{omp_atk_pool_size, 1000}, {omp_atk_fallback, omp_atv_abort_fb}};
  omp_allocator_handle_t a = omp_init_allocator(omp_default_mem_space, 2, t);
  omp_alloc(2000, a);
}

static void check_pools(void) {
  /* null_fb: the pool holds 4096 bytes, headers and padding included. */
  omp_alloctrait_t t[] = {{omp_atk_pool_size, 4096}, {omp_atk_fallback, omp_atv_null_fb}};
  omp_allocator_handle_t a = make(2, t);
  char* p = omp_alloc(4096 - HEADER, a);
  CHECK(p && canopy_omp_alloc_error() == NULL);
  CHECK(omp_alloc(1, a) == NULL);
  CHECK(canopy_omp_alloc_error() && strstr(canopy_omp_alloc_error(), "pool_size"));
  omp_free(p, a);
  p = omp_alloc(3000, a); /* the pool is free again */
  CHECK(p);
  /* A block grows within its pool by the difference only. */
  p[0] = 42;
  p = omp_realloc(p, 4000, a, a);
  CHECK(p && p[0] == 42);
  CHECK(omp_realloc(p, 4096, omp_null_allocator, a) == NULL); /* does not fit: p stays valid */
  CHECK(p[0] == 42);
  omp_free(p, omp_null_allocator);
  CHECK(omp_alloc(5000, a) == NULL);
  omp_destroy_allocator(a);

  /* default_mem_fb: the block comes from omp_default_mem_alloc (not from the pool). */
  omp_alloctrait_t d[] = {{omp_atk_pool_size, 1024}, {omp_atk_fallback, omp_atv_default_mem_fb}};
  a = make(2, d);
  char* big = omp_alloc(100000, a);
  CHECK(big && canopy_omp_alloc_error() && strstr(canopy_omp_alloc_error(), "pool_size"));
  memset(big, 1, 100000);
  char* small = omp_alloc(1024 - HEADER, a); /* the fallback took nothing from the pool */
  CHECK(small && canopy_omp_alloc_error() == NULL);
  omp_free(big, a);
  omp_free(small, a);
  omp_destroy_allocator(a);

  /* allocator_fb: to fb_data's allocator, with that allocator's traits. */
  omp_alloctrait_t f[] = {{omp_atk_alignment, 512}, {omp_atk_fallback, omp_atv_null_fb}};
  omp_allocator_handle_t fb = make(2, f);
  omp_alloctrait_t c[] = {{omp_atk_pool_size, 2048}, {omp_atk_fallback, omp_atv_allocator_fb}, {omp_atk_fb_data, fb}};
  a = make(3, c);
  p = omp_alloc(1000, a);
  CHECK(p && canopy_omp_alloc_error() == NULL);
  char* q = omp_alloc(2000, a);
  CHECK(q && ALIGNED(q, 512) && canopy_omp_alloc_error() != NULL);
  /* Freeing the fallback's block leaves a's pool as it was. */
  omp_free(q, a);
  q = omp_alloc(2048 - HEADER - 1000 - HEADER + 1, a); /* one byte too many for the pool */
  CHECK(q && ALIGNED(q, 512) && canopy_omp_alloc_error() != NULL);
  omp_free(q, a);
  q = omp_alloc(2048 - HEADER - 1000 - HEADER, a); /* exactly what is left */
  CHECK(q && canopy_omp_alloc_error() == NULL);
  omp_free(q, a);
  omp_free(p, a);
  omp_destroy_allocator(a);
  omp_destroy_allocator(fb);

  /* Pools are shared by threads: 64 blocks of 960 bytes fit exactly. */
  omp_alloctrait_t s[] = {{omp_atk_pool_size, 64 * 1024}, {omp_atk_fallback, omp_atv_null_fb}};
  a = make(2, s);
  void* blocks[65];
  int got = 0;
#pragma omp parallel for reduction(+ : got) num_threads(4)
  for (int i = 0; i < 65; ++i) {
    blocks[i] = omp_alloc(1024 - HEADER, a);
    got += blocks[i] != NULL;
  }
  CHECK(got == 64);
  for (int i = 0; i < 65; ++i) omp_free(blocks[i], a);
  omp_destroy_allocator(a);

  expect_abort(abort_fb_exhausted);
}

static long vm_locked_kb(void) {
  FILE* f = fopen("/proc/self/status", "r");
  CHECK(f);
  char line[256];
  long kb = -1;
  while (fgets(line, sizeof line, f))
    if (sscanf(line, "VmLck: %ld kB", &kb) == 1) break;
  fclose(f);
  return kb;
}

/* Without CAP_IPC_LOCK and with RLIMIT_MEMLOCK at 0, mlock must fail. */
static void lose_right_to_lock(void) {
  struct __user_cap_header_struct h = {_LINUX_CAPABILITY_VERSION_3, 0};
  struct __user_cap_data_struct d[2];
  CHECK(syscall(SYS_capget, &h, d) == 0);
  d[CAP_IPC_LOCK / 32].effective &= ~(1u << (CAP_IPC_LOCK % 32));
  d[CAP_IPC_LOCK / 32].permitted &= ~(1u << (CAP_IPC_LOCK % 32));
  CHECK(syscall(SYS_capset, &h, d) == 0);
  struct rlimit r = {0, 0};
  CHECK(setrlimit(RLIMIT_MEMLOCK, &r) == 0);
}

static void check_pinned(void) {
  omp_alloctrait_t t[] = {{omp_atk_pinned, omp_atv_true}, {omp_atk_fallback, omp_atv_null_fb}};
  omp_allocator_handle_t a = make(2, t);
  const long before = vm_locked_kb();
  char* p = omp_alloc(256 * 1024, a);
  if (p) {
    CHECK(canopy_omp_alloc_error() == NULL);
    CHECK(vm_locked_kb() >= before + 256);
    memset(p, 3, 256 * 1024);
    omp_free(p, a);
    CHECK(vm_locked_kb() == before);
  } else {
    /* This process may not lock 256 KiB: the reason must say so. */
    CHECK(canopy_omp_alloc_error() && strstr(canopy_omp_alloc_error(), "mlock"));
  }
  omp_destroy_allocator(a);

  /* Pinned and placed: the data layer's region, locked. */
  omp_alloctrait_t pp[] = {{omp_atk_pinned, omp_atv_true}, {omp_atk_partition, omp_atv_interleaved},
                           {omp_atk_fallback, omp_atv_null_fb}};
  a = make(3, pp);
  p = omp_alloc(128 * 1024, a);
  if (p) {
    CHECK(canopy_omp_alloc_error() == NULL && vm_locked_kb() >= before + 128);
    omp_free(p, a);
    CHECK(vm_locked_kb() == before);
  } else {
    CHECK(canopy_omp_alloc_error() && strstr(canopy_omp_alloc_error(), "mlock"));
  }
  omp_destroy_allocator(a);

  fflush(NULL);
  pid_t pid = fork();
  CHECK(pid >= 0);
  if (pid == 0) {
    lose_right_to_lock();
    omp_allocator_handle_t n = make(2, t);
    CHECK(omp_alloc(64 * 1024, n) == NULL);
    CHECK(canopy_omp_alloc_error() && strstr(canopy_omp_alloc_error(), "mlock"));
    omp_alloctrait_t d[] = {{omp_atk_pinned, omp_atv_true}, {omp_atk_fallback, omp_atv_default_mem_fb}};
    omp_allocator_handle_t m = make(2, d);
    char* q = omp_alloc(64 * 1024, m);
    CHECK(q && canopy_omp_alloc_error() != NULL && vm_locked_kb() == 0);
    memset(q, 1, 64 * 1024);
    omp_free(q, m);
    _exit(0);
  }
  int st = 0;
  CHECK(waitpid(pid, &st, 0) == pid && WIFEXITED(st) && WEXITSTATUS(st) == 0);
}

static int num_nodes(void) {
  int n = 0;
  char path[64];
  for (;;) {
    snprintf(path, sizeof path, "/sys/devices/system/node/node%d", n);
    if (access(path, F_OK) != 0) break;
    ++n;
  }
  return n > 0 ? n : 1;
}

/* The kernel's node of each page from `base` (page-aligned) on. */
static void page_nodes(char* base, size_t pages, int* status) {
  void** addrs = malloc(pages * sizeof *addrs);
  CHECK(addrs);
  for (size_t i = 0; i < pages; ++i) addrs[i] = base + i * page;
  long rc = syscall(SYS_move_pages, 0, pages, addrs, NULL, status, 0);
  if (rc != 0 && (errno == ENOSYS || errno == EPERM) && num_nodes() == 1) {
    /* No move_pages here: on one node, a resident page is on node 0. */
    unsigned char* vec = malloc(pages);
    CHECK(vec && mincore(base, pages * page, vec) == 0);
    for (size_t i = 0; i < pages; ++i) status[i] = (vec[i] & 1) ? 0 : -ENOENT;
    free(vec);
    rc = 0;
  }
  CHECK(rc == 0);
  free(addrs);
}

static void check_partition(omp_uintptr_t partition, const char* name) {
  const int nodes = num_nodes();
  omp_alloctrait_t t[] = {{omp_atk_partition, partition}, {omp_atk_fallback, omp_atv_null_fb}};
  omp_allocator_handle_t a = make(2, t);
  const size_t sizes[] = {page - PLACED_OFFSET, 3 * page, 1 << 20, (1 << 20) + 12345};
  for (unsigned s = 0; s < sizeof sizes / sizeof sizes[0]; ++s) {
    const size_t size = sizes[s];
    unsigned cpu = 0, here = 0;
    CHECK(syscall(SYS_getcpu, &cpu, &here, NULL) == 0);
    char* p = omp_alloc(size, a);
    if (!p) fprintf(stderr, "partition %s, %zu bytes: %s\n", name, size, canopy_omp_alloc_error());
    CHECK(p != NULL && canopy_omp_alloc_error() == NULL);
    /* The block's region starts with its header, on a page boundary. */
    char* base = p - PLACED_OFFSET;
    CHECK(ALIGNED(base, page));
    const size_t pages = (size + PLACED_OFFSET + page - 1) / page;
    int* st = malloc(pages * sizeof *st);
    CHECK(st);
    page_nodes(base, pages, st);
    const size_t per_node = (pages + nodes - 1) / nodes;
    for (size_t i = 0; i < pages; ++i) {
      CHECK(st[i] >= 0 && st[i] < nodes); /* placed blocks are touched at once */
      if (partition == omp_atv_nearest) CHECK(st[i] == (int)here);
      if (partition == omp_atv_blocked) CHECK(st[i] == (int)(i / per_node));
      if (partition == omp_atv_interleaved && i > 0) CHECK(st[i] == (st[i - 1] + 1) % nodes);
    }
    memset(p, 5, size);
    free(st);
    omp_free(p, a);
  }
  /* A block smaller than a page comes from the heap, with no error. */
  char* small = omp_calloc(1, 100, a);
  CHECK(small && small[99] == 0 && canopy_omp_alloc_error() == NULL);
  omp_free(small, a);
  /* calloc of a placed block is zero. */
  int* z = omp_calloc(4096, sizeof(int), a);
  CHECK(z);
  for (int i = 0; i < 4096; ++i) CHECK(z[i] == 0);
  omp_free(z, a);
  omp_destroy_allocator(a);
}

static void check_default_allocator(void) {
  const char* expect = getenv("ALLOC_EXPECT_DEFAULT");
  const omp_allocator_handle_t initial = expect ? (omp_allocator_handle_t)strtoul(expect, NULL, 0) : omp_default_mem_alloc;
  CHECK(omp_get_default_allocator() == initial);
  int bad = 0, bad_in_task = 0; /* a task may not touch a reduction variable (clang enforces it) */
#pragma omp parallel num_threads(3) reduction(+ : bad)
  {
    bad += omp_get_default_allocator() != initial;
#pragma omp task shared(bad_in_task)
    {
      if (omp_get_default_allocator() != initial) {
#pragma omp atomic
        bad_in_task++;
      }
    }
  }
  CHECK(bad == 0 && bad_in_task == 0);
  /* omp_set_default_allocator: a team's threads inherit it, and the
     allocate clause without an allocator uses it. */
  omp_alloctrait_t t[] = {{omp_atk_alignment, 256}};
  omp_allocator_handle_t a = make(1, t);
  omp_set_default_allocator(a);
  int x = 1;
#pragma omp parallel num_threads(3) firstprivate(x) allocate(x) reduction(+ : bad)
  {
    bad += omp_get_default_allocator() != a;
    bad += !ALIGNED(&x, 256);
    void* mine = omp_alloc(10, omp_null_allocator);
    bad += mine == NULL || !ALIGNED(mine, 256);
    omp_free(mine, omp_null_allocator);
  }
  CHECK(bad == 0);
  omp_set_default_allocator(omp_null_allocator); /* as libgomp: omp_default_mem_alloc */
  CHECK(omp_get_default_allocator() == omp_default_mem_alloc);
  omp_set_default_allocator(initial);
  omp_destroy_allocator(a);
}

int main(void) {
  CHECK(canopy_omp_is_canopy && canopy_omp_is_canopy() == 1 && canopy_omp_alloc_error);
  page = (size_t)sysconf(_SC_PAGESIZE);
  check_default_allocator();
  check_predefined();
  check_trait_values();
  check_alignment();
  check_pools();
#if !defined(__SANITIZE_ADDRESS__) && !defined(__SANITIZE_THREAD__) && !defined(CANOPY_TEST_RUNTIME_SANITIZED)
  check_pinned();
#else
  /* the sanitizers make mlock a no-op, also for an unsanitized (clang) program
     on a sanitized runtime: nothing to check there */
  (void)check_pinned;
#endif
  check_partition(omp_atv_nearest, "nearest");
  check_partition(omp_atv_blocked, "blocked");
  check_partition(omp_atv_interleaved, "interleaved");
  printf("allocators: all checks passed on %d NUMA node(s)\n", num_nodes());
  return 0;
}
