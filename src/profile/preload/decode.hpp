// Which memory addresses a thread is about to touch, from the instructions at
// its program counter: the portable sampler's way to see data addresses
// without hardware address sampling. At each sample the thread's registers
// are known (the signal's context); the instruction at the program counter
// has not run yet, so its memory operands' effective addresses
// (base + index * scale + displacement) are exactly what it will access.
// The next few instructions are decoded too, to get several accesses per
// sample: the simple integer instructions that move addresses along (mov,
// add, sub, inc, dec, lea between registers and constants) are emulated on
// a copy of the registers, and compares followed by conditional jumps are
// evaluated, so that a sample anywhere in a loop still finds the loop's
// next load or store at its exact address. A register written any other
// way becomes unknown and the addresses that use it are skipped; calls,
// returns, indirect jumps and code outside the sampled page end the walk.
// x86-64 only (Capstone).
//
// find_accesses runs in a signal handler, which may have interrupted malloc:
// it must neither lock nor call malloc. The Capstone handle and instruction
// buffer are made per thread beforehand by open(), and the little memory
// Capstone asks for while decoding (it does, for printing) comes from the
// decoder's own arena, reset at each call (Capstone's CS_OPT_MEM hooks; see
// decode.cpp).
#pragma once
#include <cstddef>
#include <cstdint>

namespace canopy::profile {

// The general-purpose registers in this order (what the address of a
// memory operand can use), and the program counter.
enum Gpr { kRax, kRbx, kRcx, kRdx, kRsi, kRdi, kRbp, kRsp, kR8, kR9, kR10, kR11, kR12, kR13, kR14, kR15, kNumGprs };

struct Registers {
  std::uint64_t gpr[kNumGprs] = {};
  std::uint64_t rip = 0;
};

struct Access {
  std::uint64_t address = 0;
  bool write = false;
};

class AddressDecoder {
 public:
  AddressDecoder() = default;
  ~AddressDecoder();
  AddressDecoder(const AddressDecoder&) = delete;
  AddressDecoder& operator=(const AddressDecoder&) = delete;

  // Opens Capstone (allocates). False when Capstone cannot be opened.
  bool open();
  bool is_open() const { return insn_ != nullptr; }

  // Walks the code from regs.rip and writes up to `max` accesses to `out`;
  // returns how many. [begin, end) is the code that may be read, found at
  // address `begin_address` in the program (the walk stops where it
  // leaves it). At most `max_instructions` instructions are decoded.
  // Async-signal-safe once open.
  int find_accesses(const std::uint8_t* begin, const std::uint8_t* end, std::uint64_t begin_address,
                    const Registers& regs, Access* out, int max, int max_instructions = 32);

 private:
  std::size_t handle_ = 0;  // csh
  void* insn_ = nullptr;    // cs_insn*, with its detail
  char* arena_ = nullptr;   // what Capstone allocates during find_accesses (kArenaBytes, mmap'ed)
};

}  // namespace canopy::profile
