// The portable sampler's address decoder (src/profile/preload/decode.cpp) on
// hand-assembled x86-64 code: operands, the emulated loop walk, and where
// the walk must stop.
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "profile/preload/decode.hpp"

namespace canopy::profile {
namespace {

// as(1) output of:
//  0: mov (%rax),%rdx                 3: mov %rdx,0x10(%rbx,%rcx,8)
//  8: mov 0x2ea6(%rip),%rcx           f: lea 0x8(%rax),%rsi
// 13: mov %fs:0x28,%rax              1c: call 21                      21: nop
// 22: mov (%rax),%rdx   25: and $1,%edx   28: addsd 0x8(%rsp),%xmm0   2e: add $8,%rax
// 32: cmp %rcx,%rax     35: jne 22        37: mov %rdx,(%rdi)
// 3a: mov (%rax),%rax   3d: mov (%rax),%rbx   40: mov 0x4(%rsi),%ecx   43: ret
const std::vector<std::uint8_t> kCode = {
    0x48, 0x8b, 0x10, 0x48, 0x89, 0x54, 0xcb, 0x10, 0x48, 0x8b, 0x0d, 0xa6, 0x2e, 0x00, 0x00, 0x48, 0x8d,
    0x70, 0x08, 0x64, 0x48, 0x8b, 0x04, 0x25, 0x28, 0x00, 0x00, 0x00, 0xe8, 0x00, 0x00, 0x00, 0x00, 0x90,
    0x48, 0x8b, 0x10, 0x83, 0xe2, 0x01, 0xf2, 0x0f, 0x58, 0x44, 0x24, 0x08, 0x48, 0x83, 0xc0, 0x08, 0x48,
    0x39, 0xc8, 0x75, 0xeb, 0x48, 0x89, 0x17, 0x48, 0x8b, 0x00, 0x48, 0x8b, 0x18, 0x8b, 0x4e, 0x04, 0xc3};
constexpr std::uint64_t kBase = 0x400000;

Registers regs_at(std::uint64_t offset) {
  Registers r;
  r.gpr[kRax] = 0x1000;
  r.gpr[kRbx] = 0x20000;
  r.gpr[kRcx] = 0x1010;
  r.gpr[kRsi] = 0x30000;
  r.gpr[kRdi] = 0x40000;
  r.gpr[kRsp] = 0x7000;
  r.rip = kBase + offset;
  return r;
}

std::vector<Access> walk(std::uint64_t offset, std::size_t readable = kCode.size(), int max = 8) {
  AddressDecoder d;
  EXPECT_TRUE(d.open());
  Access out[16];
  const int n = d.find_accesses(kCode.data(), kCode.data() + readable, kBase, regs_at(offset), out, max);
  return std::vector<Access>(out, out + n);
}

TEST(AddressDecoder, ComputesBaseIndexScaleDisplacementAndRipRelativeOperands) {
  const auto a = walk(0);
  // lea is no access, %fs is thread-local storage, the call ends the walk.
  ASSERT_EQ(a.size(), 3u);
  EXPECT_EQ(a[0].address, 0x1000u);
  EXPECT_FALSE(a[0].write);
  EXPECT_EQ(a[1].address, 0x20000u + 0x1010u * 8 + 0x10);
  EXPECT_TRUE(a[1].write);
  EXPECT_EQ(a[2].address, kBase + 0xf + 0x2ea6);  // the next instruction's address + displacement
}

TEST(AddressDecoder, FollowsALoopByEmulatingItsCounterAndCompare) {
  // Sampled after the loop's load: the walk goes round once more (rax + 8
  // != rcx), then leaves the loop (rax == rcx) and stops at the ret.
  const auto a = walk(0x25);
  ASSERT_EQ(a.size(), 6u);
  EXPECT_EQ(a[0].address, 0x7008u);   // addsd 0x8(%rsp)
  EXPECT_EQ(a[1].address, 0x1008u);   // mov (%rax) with rax advanced by the emulated add
  EXPECT_EQ(a[2].address, 0x7008u);
  EXPECT_EQ(a[3].address, 0x40000u);  // after the loop: mov %rdx,(%rdi)
  EXPECT_TRUE(a[3].write);
  EXPECT_EQ(a[4].address, 0x1010u);   // mov (%rax),%rax ...
  EXPECT_EQ(a[5].address, 0x30004u);  // ... makes rax unknown: (%rax) is skipped, 0x4(%rsi) is not
}

TEST(AddressDecoder, StaysInsideTheReadableCodeAndTheLimit) {
  EXPECT_EQ(walk(0x25, 0x2e).size(), 1u);  // the add at 0x2e is beyond what may be read
  EXPECT_EQ(walk(0x25, kCode.size(), 2).size(), 2u);
  EXPECT_TRUE(walk(0x43).empty());  // ret
}

TEST(AddressDecoder, AnUnopenedDecoderFindsNothing) {
  AddressDecoder d;
  Access out[4];
  EXPECT_EQ(d.find_accesses(kCode.data(), kCode.data() + kCode.size(), kBase, regs_at(0), out, 4), 0);
}

}  // namespace
}  // namespace canopy::profile
