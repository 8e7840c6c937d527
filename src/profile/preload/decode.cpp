// Effective addresses of the memory operands at and after a thread's program
// counter (see decode.hpp), with Capstone's x86-64 decoder and a tiny
// emulator of the instructions that move addresses along.
#include "decode.hpp"

#include <capstone/capstone.h>
#include <sys/mman.h>

#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <atomic>

namespace canopy::profile {
namespace {

// --- Capstone's memory while decoding ---
//
// cs_disasm_iter allocates (and frees) small blocks while it prints the
// instruction. Inside the sampling signal handler that would deadlock when
// the signal interrupted malloc. So while find_accesses runs, Capstone's
// allocations come from the decoder's arena: a bump allocator reset at each
// call (every block Capstone takes there is freed before cs_disasm_iter
// returns; free is a no-op for them). Outside find_accesses (cs_open),
// plain malloc.
constexpr std::size_t kArenaBytes = 64 * 1024;

struct Arena {
  char* base;
  std::size_t used;
};
__thread Arena tls_arena __attribute__((tls_model("initial-exec"))) = {nullptr, 0};

bool in_arena(const void* p) {
  const char* c = static_cast<const char*>(p);
  return tls_arena.base && c >= tls_arena.base && c < tls_arena.base + kArenaBytes;
}

// Blocks carry their size in front (for realloc), 16-byte aligned.
void* arena_alloc(std::size_t n) {
  const std::size_t need = (n + 16 + 15) & ~std::size_t{15};
  if (tls_arena.used + need > kArenaBytes) return nullptr;
  char* p = tls_arena.base + tls_arena.used;
  tls_arena.used += need;
  std::memcpy(p, &n, sizeof n);
  return p + 16;
}

void* cs_malloc_hook(std::size_t n) { return tls_arena.base ? arena_alloc(n) : std::malloc(n); }
void* cs_calloc_hook(std::size_t count, std::size_t size) {
  if (!tls_arena.base) return std::calloc(count, size);
  if (size != 0 && count > kArenaBytes / size) return nullptr;
  void* p = arena_alloc(count * size);
  if (p) std::memset(p, 0, count * size);
  return p;
}
void* cs_realloc_hook(void* old, std::size_t n) {
  if (!tls_arena.base) return std::realloc(old, n);
  if (old && !in_arena(old)) return nullptr;  // a heap block cannot grow here without malloc
  void* p = arena_alloc(n);
  if (p && old) {
    std::size_t had;
    std::memcpy(&had, static_cast<char*>(old) - 16, sizeof had);
    std::memcpy(p, old, had < n ? had : n);
  }
  return p;
}
void cs_free_hook(void* p) {
  if (p && !in_arena(p) && !tls_arena.base) std::free(p);
}
int cs_vsnprintf_hook(char* s, std::size_t n, const char* format, va_list ap) { return std::vsnprintf(s, n, format, ap); }

// Once per process, before the first cs_open (an atomic, not std::call_once:
// the profiling library needs no C++ runtime).
void install_memory_hooks() {
  static std::atomic<int> state{0};  // 0 not yet, 1 being installed, 2 done
  int expected = 0;
  if (state.compare_exchange_strong(expected, 1)) {
    cs_opt_mem mem{};
    mem.malloc = cs_malloc_hook;
    mem.calloc = cs_calloc_hook;
    mem.realloc = cs_realloc_hook;
    mem.free = cs_free_hook;
    mem.vsnprintf = cs_vsnprintf_hook;
    cs_option(0, CS_OPT_MEM, reinterpret_cast<std::size_t>(&mem));
    state.store(2);
  }
  while (state.load() != 2) {
  }
}

// The slot of a 64- or 32-bit general-purpose register, or -1. `bytes` is
// its width (a 32-bit register is the low half; writing it clears the top).
int gpr_slot(unsigned reg, int* bytes) {
  *bytes = 8;
  switch (reg) {
    case X86_REG_RAX: return kRax;
    case X86_REG_RBX: return kRbx;
    case X86_REG_RCX: return kRcx;
    case X86_REG_RDX: return kRdx;
    case X86_REG_RSI: return kRsi;
    case X86_REG_RDI: return kRdi;
    case X86_REG_RBP: return kRbp;
    case X86_REG_RSP: return kRsp;
    case X86_REG_R8: return kR8;
    case X86_REG_R9: return kR9;
    case X86_REG_R10: return kR10;
    case X86_REG_R11: return kR11;
    case X86_REG_R12: return kR12;
    case X86_REG_R13: return kR13;
    case X86_REG_R14: return kR14;
    case X86_REG_R15: return kR15;
    default: break;
  }
  *bytes = 4;
  switch (reg) {
    case X86_REG_EAX: return kRax;
    case X86_REG_EBX: return kRbx;
    case X86_REG_ECX: return kRcx;
    case X86_REG_EDX: return kRdx;
    case X86_REG_ESI: return kRsi;
    case X86_REG_EDI: return kRdi;
    case X86_REG_EBP: return kRbp;
    case X86_REG_ESP: return kRsp;
    case X86_REG_R8D: return kR8;
    case X86_REG_R9D: return kR9;
    case X86_REG_R10D: return kR10;
    case X86_REG_R11D: return kR11;
    case X86_REG_R12D: return kR12;
    case X86_REG_R13D: return kR13;
    case X86_REG_R14D: return kR14;
    case X86_REG_R15D: return kR15;
    default: return -1;
  }
}

// The general-purpose register a (sub-)register is part of, or -1: writing
// al, ax, eax or rax all change rax.
int containing_gpr(unsigned reg) {
  int bytes;
  const int s = gpr_slot(reg, &bytes);
  if (s >= 0) return s;
  switch (reg) {
    case X86_REG_AX: case X86_REG_AL: case X86_REG_AH: return kRax;
    case X86_REG_BX: case X86_REG_BL: case X86_REG_BH: return kRbx;
    case X86_REG_CX: case X86_REG_CL: case X86_REG_CH: return kRcx;
    case X86_REG_DX: case X86_REG_DL: case X86_REG_DH: return kRdx;
    case X86_REG_SI: case X86_REG_SIL: return kRsi;
    case X86_REG_DI: case X86_REG_DIL: return kRdi;
    case X86_REG_BP: case X86_REG_BPL: return kRbp;
    case X86_REG_SP: case X86_REG_SPL: return kRsp;
    case X86_REG_R8W: case X86_REG_R8B: return kR8;
    case X86_REG_R9W: case X86_REG_R9B: return kR9;
    case X86_REG_R10W: case X86_REG_R10B: return kR10;
    case X86_REG_R11W: case X86_REG_R11B: return kR11;
    case X86_REG_R12W: case X86_REG_R12B: return kR12;
    case X86_REG_R13W: case X86_REG_R13B: return kR13;
    case X86_REG_R14W: case X86_REG_R14B: return kR14;
    case X86_REG_R15W: case X86_REG_R15B: return kR15;
    default: return -1;
  }
}

std::uint64_t truncate(std::uint64_t v, int bytes) { return bytes >= 8 ? v : v & ((std::uint64_t{1} << (8 * bytes)) - 1); }
std::int64_t sign_extend(std::uint64_t v, int bytes) {
  if (bytes >= 8) return static_cast<std::int64_t>(v);
  const int shift = 64 - 8 * bytes;
  return static_cast<std::int64_t>(v << shift) >> shift;
}

// The registers as far as they are known, and what the last instruction
// that set the flags compared.
struct Machine {
  std::uint64_t v[kNumGprs];
  unsigned known = (1u << kNumGprs) - 1;
  enum Flags { kUnknown, kCompare, kTest, kResult } flags = kUnknown;
  std::uint64_t fa = 0, fb = 0;  // cmp: a - b; test: a & b; result: fa
  int fbytes = 8;

  bool read(const cs_x86_op& op, std::uint64_t* out) const {
    if (op.type == X86_OP_IMM) {
      *out = static_cast<std::uint64_t>(op.imm);
      return true;
    }
    if (op.type != X86_OP_REG) return false;
    int bytes;
    const int s = gpr_slot(op.reg, &bytes);
    if (s < 0 || !(known >> s & 1)) return false;
    *out = truncate(v[s], bytes);
    return true;
  }
  // Writes a register operand; false when it is not one the machine tracks.
  bool write(const cs_x86_op& op, std::uint64_t value) {
    if (op.type != X86_OP_REG) return false;
    int bytes;
    const int s = gpr_slot(op.reg, &bytes);
    if (s < 0) return false;
    v[s] = truncate(value, bytes);
    known |= 1u << s;
    return true;
  }
  void forget(unsigned reg) {
    const int s = containing_gpr(reg);
    if (s >= 0) known &= ~(1u << s);
  }
  bool address(const cs_insn* insn, const x86_op_mem& m, std::uint64_t* out) const {
    std::uint64_t ea = static_cast<std::uint64_t>(m.disp);
    if (m.base == X86_REG_RIP) {
      ea += insn->address + insn->size;
    } else if (m.base != X86_REG_INVALID) {
      int bytes;
      const int s = gpr_slot(m.base, &bytes);
      if (s < 0 || !(known >> s & 1)) return false;
      ea += truncate(v[s], bytes);
    }
    if (m.index != X86_REG_INVALID) {
      int bytes;
      const int s = gpr_slot(m.index, &bytes);  // a vector index (gather) is -1: unknown
      if (s < 0 || !(known >> s & 1)) return false;
      ea += truncate(v[s], bytes) * static_cast<std::uint64_t>(m.scale);
    }
    *out = ea;
    return true;
  }

  // Whether conditional jump `id` is taken: 1, 0, or -1 when the flags are
  // not known well enough to say.
  int taken(unsigned id) const {
    if (flags == kUnknown) return -1;
    const std::uint64_t ua = truncate(fa, fbytes), ub = truncate(fb, fbytes);
    const std::int64_t sa = sign_extend(ua, fbytes), sb = sign_extend(ub, fbytes);
    bool zf, sf, cf_known = flags == kCompare || flags == kTest, cf = false, of_known = cf_known, lt = false;
    if (flags == kCompare) {
      const std::uint64_t r = truncate(ua - ub, fbytes);
      zf = r == 0;
      sf = sign_extend(r, fbytes) < 0;
      cf = ua < ub;
      lt = sa < sb;  // SF != OF
    } else {
      const std::uint64_t r = flags == kTest ? (ua & ub) : ua;
      zf = r == 0;
      sf = sign_extend(r, fbytes) < 0;
      lt = sf;  // test clears OF
    }
    switch (id) {
      case X86_INS_JE: return zf;
      case X86_INS_JNE: return !zf;
      case X86_INS_JS: return sf;
      case X86_INS_JNS: return !sf;
      case X86_INS_JB: return cf_known ? cf : -1;
      case X86_INS_JAE: return cf_known ? !cf : -1;
      case X86_INS_JBE: return cf_known ? (cf || zf) : -1;
      case X86_INS_JA: return cf_known ? !(cf || zf) : -1;
      case X86_INS_JL: return of_known ? lt : -1;
      case X86_INS_JGE: return of_known ? !lt : -1;
      case X86_INS_JLE: return of_known ? (zf || lt) : -1;
      case X86_INS_JG: return of_known ? !(zf || lt) : -1;
      default: return -1;
    }
  }
};

bool in_group(const cs_insn* insn, int group) {
  const cs_detail* d = insn->detail;
  for (int g = 0; g < d->groups_count; ++g)
    if (d->groups[g] == group) return true;
  return false;
}

// Instructions whose memory operand is not an access (lea computes an
// address, the multi-byte nop only encodes one).
bool touches_memory(const cs_insn* insn) { return insn->id != X86_INS_LEA && insn->id != X86_INS_NOP; }

// Carries out the instruction's effect on the registers and flags as far as
// the machine follows it; anything else written becomes unknown.
void emulate(csh handle, const cs_insn* insn, Machine& m) {
  const cs_x86& x = insn->detail->x86;
  const cs_x86_op* op = x.operands;
  std::uint64_t a = 0, b = 0;
  const bool two = x.op_count == 2;
  switch (insn->id) {
    case X86_INS_MOV:
    case X86_INS_MOVABS:
      if (two && op[0].type == X86_OP_REG && op[1].type != X86_OP_MEM && m.read(op[1], &b) && m.write(op[0], b)) return;
      break;
    case X86_INS_LEA:
      if (two && op[1].type == X86_OP_MEM && m.address(insn, op[1].mem, &b) && m.write(op[0], b)) return;
      break;
    case X86_INS_ADD:
    case X86_INS_SUB:
      if (two && op[0].type == X86_OP_REG && m.read(op[0], &a) && m.read(op[1], &b)) {
        const std::uint64_t r = insn->id == X86_INS_ADD ? a + b : a - b;
        if (insn->id == X86_INS_SUB) m.flags = Machine::kCompare, m.fa = a, m.fb = b;
        else m.flags = Machine::kResult, m.fa = r;
        m.fbytes = op[0].size;
        if (m.write(op[0], r)) return;
      }
      break;
    case X86_INS_INC:
    case X86_INS_DEC:
      if (x.op_count == 1 && m.read(op[0], &a)) {
        const std::uint64_t r = insn->id == X86_INS_INC ? a + 1 : a - 1;
        m.flags = Machine::kResult;
        m.fa = r;
        m.fbytes = op[0].size;
        if (m.write(op[0], r)) return;
      }
      break;
    case X86_INS_CMP:
    case X86_INS_TEST:
      if (two && m.read(op[0], &a) && m.read(op[1], &b)) {
        m.flags = insn->id == X86_INS_CMP ? Machine::kCompare : Machine::kTest;
        m.fa = a;
        m.fb = b;
        m.fbytes = op[0].size;
        return;  // writes no register
      }
      m.flags = Machine::kUnknown;
      return;
    default:
      break;
  }
  // Not followed: every register it writes (explicitly or not) becomes
  // unknown, and so do the flags when it may have changed them.
  cs_regs rd, wr;
  std::uint8_t nrd = 0, nwr = 0;
  if (cs_regs_access(handle, insn, rd, &nrd, wr, &nwr) != CS_ERR_OK) {
    m.known = 0;
    m.flags = Machine::kUnknown;
    return;
  }
  for (int i = 0; i < nwr; ++i) {
    if (wr[i] == X86_REG_EFLAGS) m.flags = Machine::kUnknown;
    m.forget(wr[i]);
  }
}

// Capstone builds some tables on first use: a per-handle instruction cache
// (allocated, kept in the handle) and process-wide sorted copies of its
// implicit-register tables (qsort, which mallocs). Neither may happen first
// inside the signal handler, so open() decodes, with malloc still allowed,
// instructions that reach them: ordinary ones, ones with implicit registers
// (add eax,imm; in al,dx; rep movsb; cqo; mul; shl by cl; push; pop; cpuid;
// lock cmpxchg).
void warm_up(csh h, cs_insn* insn) {
  static const std::uint8_t code[] = {0x05, 0x01, 0x00, 0x00, 0x00, 0xec, 0xf3, 0xa4, 0x48, 0x99, 0x48, 0xf7, 0xe1,
                                      0x48, 0xd3, 0xe0, 0x6a, 0x00, 0x58, 0x0f, 0xa2, 0xf0, 0x48, 0x0f, 0xb1, 0x0a,
                                      0x48, 0x8b, 0x10, 0x48, 0x89, 0x54, 0xcb, 0x10, 0x75, 0xeb, 0xc3};
  const std::uint8_t* p = code;
  std::size_t size = sizeof code;
  std::uint64_t address = 0x1000;
  while (cs_disasm_iter(h, &p, &size, &address, insn)) {
    cs_regs rd, wr;
    std::uint8_t nrd = 0, nwr = 0;
    cs_regs_access(h, insn, rd, &nrd, wr, &nwr);
  }
}

}  // namespace

AddressDecoder::~AddressDecoder() {
  if (arena_) ::munmap(arena_, kArenaBytes);
  if (insn_) cs_free(static_cast<cs_insn*>(insn_), 1);
  if (handle_) {
    csh h = handle_;
    cs_close(&h);
  }
}

bool AddressDecoder::open() {
  if (insn_) return true;
  install_memory_hooks();
  void* a = ::mmap(nullptr, kArenaBytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (a == MAP_FAILED) return false;
  arena_ = static_cast<char*>(a);
  csh h = 0;
  if (cs_open(CS_ARCH_X86, CS_MODE_64, &h) != CS_ERR_OK) return false;
  cs_option(h, CS_OPT_DETAIL, CS_OPT_ON);
  handle_ = h;
  insn_ = cs_malloc(h);
  if (!insn_) return false;
  warm_up(h, static_cast<cs_insn*>(insn_));
  return true;
}

int AddressDecoder::find_accesses(const std::uint8_t* begin, const std::uint8_t* end, std::uint64_t begin_address,
                                  const Registers& regs, Access* out, int max, int max_instructions) {
  if (!insn_ || max <= 0) return 0;
  // Capstone's allocations go to the arena until we return (see above).
  struct UseArena {
    explicit UseArena(char* base) { tls_arena = {base, 0}; }
    ~UseArena() { tls_arena = {nullptr, 0}; }
  } use_arena(arena_);
  cs_insn* insn = static_cast<cs_insn*>(insn_);
  Machine m;
  for (int i = 0; i < kNumGprs; ++i) m.v[i] = regs.gpr[i];
  const std::uint64_t end_address = begin_address + static_cast<std::uint64_t>(end - begin);
  std::uint64_t pc = regs.rip;
  int found = 0;
  for (int k = 0; k < max_instructions && found < max; ++k) {
    if (pc < begin_address || pc >= end_address) break;  // only the readable range is decoded
    const std::uint8_t* code = begin + (pc - begin_address);
    std::size_t size = static_cast<std::size_t>(end - code);
    std::uint64_t next = pc;
    if (!cs_disasm_iter(handle_, &code, &size, &next, insn)) break;
    const cs_x86& x = insn->detail->x86;
    if (touches_memory(insn))
      for (int i = 0; i < x.op_count && found < max; ++i) {
        const cs_x86_op& op = x.operands[i];
        if (op.type != X86_OP_MEM) continue;
        // fs/gs: thread-local storage, never shared and its base is not in the context.
        if (op.mem.segment == X86_REG_FS || op.mem.segment == X86_REG_GS) continue;
        std::uint64_t ea;
        if (!m.address(insn, op.mem, &ea)) continue;
        out[found].address = ea;
        out[found].write = (op.access & CS_AC_WRITE) != 0;
        ++found;
      }
    pc = next;
    if (in_group(insn, CS_GRP_CALL) || in_group(insn, CS_GRP_RET) || in_group(insn, CS_GRP_INT) ||
        in_group(insn, CS_GRP_IRET))
      break;
    if (in_group(insn, CS_GRP_JUMP)) {
      if (x.op_count != 1 || x.operands[0].type != X86_OP_IMM) break;  // indirect: where to is unknown
      const std::uint64_t target = static_cast<std::uint64_t>(x.operands[0].imm);
      int taken = insn->id == X86_INS_JMP ? 1 : m.taken(insn->id);
      if (taken < 0) taken = target < insn->address;  // flags unknown: a backward branch is taken (loops)
      if (taken) pc = target;
      continue;
    }
    emulate(handle_, insn, m);
  }
  return found;
}

}  // namespace canopy::profile
