// Function names of code addresses, for the labels of tasks known only by
// their function (the outlined functions of OpenMP regions and tasks, which
// are local symbols: dladdr sees only exported ones). The object holding an
// address comes from the loader (dladdr1's link map: its file and load
// bias); its symbol table (.symtab, else .dynsym) is read from the file with
// <elf.h>, once per object and session. Off the hot path: used when a
// session's events are decoded.
#include "trace/symbols.hpp"

#include <cxxabi.h>
#include <dlfcn.h>
#include <elf.h>
#include <fcntl.h>
#include <link.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>

namespace canopy::trace_impl {

namespace {

// The function symbols of one ELF file (64-bit, the host's byte order), by
// address relative to its load bias.
void read_symbols(const char* path, std::vector<CodeSymbols::Symbol>& out) {
  const int fd = ::open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return;
  struct stat st;
  if (::fstat(fd, &st) != 0 || st.st_size < static_cast<off_t>(sizeof(Elf64_Ehdr))) {
    ::close(fd);
    return;
  }
  const std::size_t size = static_cast<std::size_t>(st.st_size);
  void* map = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
  ::close(fd);
  if (map == MAP_FAILED) return;
  const auto* base = static_cast<const unsigned char*>(map);
  const auto* eh = reinterpret_cast<const Elf64_Ehdr*>(base);
  auto inside = [&](std::uint64_t off, std::uint64_t len) { return off <= size && len <= size - off; };
  if (std::memcmp(eh->e_ident, ELFMAG, SELFMAG) == 0 && eh->e_ident[EI_CLASS] == ELFCLASS64 &&
      eh->e_shentsize == sizeof(Elf64_Shdr) && inside(eh->e_shoff, std::uint64_t{eh->e_shnum} * sizeof(Elf64_Shdr))) {
    const auto* sh = reinterpret_cast<const Elf64_Shdr*>(base + eh->e_shoff);
    for (Elf32_Word want : {Elf32_Word{SHT_SYMTAB}, Elf32_Word{SHT_DYNSYM}}) {
      for (int i = 0; i < eh->e_shnum; ++i) {
        const Elf64_Shdr& s = sh[i];
        if (s.sh_type != want || s.sh_link >= eh->e_shnum || s.sh_entsize != sizeof(Elf64_Sym)) continue;
        const Elf64_Shdr& strs = sh[s.sh_link];
        if (!inside(s.sh_offset, s.sh_size) || !inside(strs.sh_offset, strs.sh_size)) continue;
        const auto* syms = reinterpret_cast<const Elf64_Sym*>(base + s.sh_offset);
        const char* names = reinterpret_cast<const char*>(base + strs.sh_offset);
        for (std::uint64_t k = 0; k < s.sh_size / sizeof(Elf64_Sym); ++k) {
          const Elf64_Sym& y = syms[k];
          if (ELF64_ST_TYPE(y.st_info) != STT_FUNC || y.st_value == 0 || y.st_name >= strs.sh_size) continue;
          const char* n = names + y.st_name;
          out.push_back({y.st_value, y.st_size, std::string(n, strnlen(n, strs.sh_size - y.st_name))});
        }
      }
      if (!out.empty()) break;  // .symtab found: .dynsym is a subset of it
    }
  }
  ::munmap(map, size);
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.start < b.start; });
}

std::string demangled(const std::string& name) {
  int status = 0;
  char* d = abi::__cxa_demangle(name.c_str(), nullptr, nullptr, &status);
  if (status != 0 || !d) return name;
  std::string s = d;
  std::free(d);
  return s;
}

}  // namespace

std::string CodeSymbols::name_of(std::uint64_t addr) {
  if (addr == 0) return {};
  Dl_info info;
  link_map* lm = nullptr;
  if (!dladdr1(reinterpret_cast<void*>(addr), &info, reinterpret_cast<void**>(&lm), RTLD_DL_LINKMAP) || !lm)
    return {};
  const std::string file = lm->l_name && *lm->l_name ? lm->l_name : "/proc/self/exe";
  auto [it, added] = objects_.try_emplace(file);
  if (added) read_symbols(file.c_str(), it->second);
  const std::vector<Symbol>& syms = it->second;
  const std::uint64_t rel = addr - lm->l_addr;
  auto s = std::upper_bound(syms.begin(), syms.end(), rel, [](std::uint64_t a, const Symbol& y) { return a < y.start; });
  // The last symbol starting at or before the address whose range holds it.
  while (s != syms.begin()) {
    --s;
    if (rel < s->start + std::max<std::uint64_t>(s->size, 1)) return demangled(s->name);
    if (s->size != 0) break;
  }
  if (info.dli_sname && info.dli_saddr == reinterpret_cast<void*>(addr)) return demangled(info.dli_sname);
  return {};
}

}  // namespace canopy::trace_impl
