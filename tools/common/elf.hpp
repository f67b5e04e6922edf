#pragma once
// What the tools read from ELF files themselves, without running them or binutils: the shared
// libraries an executable names (DT_NEEDED: ldd would run the program's loader, and what is asked
// is only which OpenMP runtime it links), and whether a kernel image carries a given note.

#include <elf.h>

#include <cstdint>
#include <cstring>
#include <fstream>
#include <string>
#include <string_view>
#include <vector>

namespace tools {

namespace detail {
/// The program headers of the 64-bit little-endian ELF file `in` reads; false for anything else.
inline bool program_headers(std::ifstream& in, std::vector<Elf64_Phdr>& ph) {
    Elf64_Ehdr eh{};
    if (!in.read(reinterpret_cast<char*>(&eh), sizeof eh) || std::memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 ||
        eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_ident[EI_DATA] != ELFDATA2LSB || eh.e_phentsize != sizeof(Elf64_Phdr) ||
        eh.e_phnum > 4096)
        return false;
    ph.resize(eh.e_phnum);
    in.seekg(static_cast<std::streamoff>(eh.e_phoff));
    return static_cast<bool>(
        in.read(reinterpret_cast<char*>(ph.data()), static_cast<std::streamsize>(ph.size() * sizeof(Elf64_Phdr))));
}
}  // namespace detail

/// DT_NEEDED entries of a 64-bit little-endian ELF file ("libgomp.so.1", ...); empty for
/// anything else (scripts, static executables, unreadable or malformed files).
inline std::vector<std::string> elf_needed(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    std::vector<Elf64_Phdr> ph;
    if (!detail::program_headers(in, ph)) return {};
    // Addresses in the dynamic section are virtual; the loadable segments map them to the file.
    auto offset_of = [&](Elf64_Addr addr, Elf64_Off& off) {
        for (const auto& p : ph)
            if (p.p_type == PT_LOAD && addr >= p.p_vaddr && addr < p.p_vaddr + p.p_filesz) {
                off = p.p_offset + (addr - p.p_vaddr);
                return true;
            }
        return false;
    };
    std::vector<Elf64_Dyn> dyn;
    for (const auto& p : ph) {
        if (p.p_type != PT_DYNAMIC || p.p_filesz > (1u << 20)) continue;
        dyn.resize(p.p_filesz / sizeof(Elf64_Dyn));
        in.seekg(static_cast<std::streamoff>(p.p_offset));
        if (!in.read(reinterpret_cast<char*>(dyn.data()), static_cast<std::streamsize>(dyn.size() * sizeof(Elf64_Dyn))))
            return {};
    }
    Elf64_Off strtab = 0;
    bool have_strtab = false;
    for (const auto& d : dyn)
        if (d.d_tag == DT_STRTAB) have_strtab = offset_of(d.d_un.d_ptr, strtab);
    std::vector<std::string> needed;
    if (!have_strtab) return needed;
    for (const auto& d : dyn) {
        if (d.d_tag == DT_NULL) break;
        if (d.d_tag != DT_NEEDED) continue;
        in.clear();
        in.seekg(static_cast<std::streamoff>(strtab + d.d_un.d_val));
        std::string name;
        std::getline(in, name, '\0');
        if (in && name.size() < 4096) needed.push_back(name);
    }
    return needed;
}

/// Whether the 64-bit little-endian ELF file at `path` has a note of `type` owned by `name`
/// (as readelf -n lists them) in one of its PT_NOTE segments. false for anything else,
/// malformed files included: every length is checked against the segment before it is used.
inline bool elf_has_note(const std::string& path, std::string_view name, std::uint32_t type) {
    std::ifstream in(path, std::ios::binary);
    std::vector<Elf64_Phdr> ph;
    if (!detail::program_headers(in, ph)) return false;
    const auto padded = [](std::uint64_t n) { return (n + 3) & ~std::uint64_t{3}; };
    for (const auto& p : ph) {
        if (p.p_type != PT_NOTE || p.p_filesz > (1u << 20)) continue;
        std::string seg(p.p_filesz, '\0');
        in.clear();
        in.seekg(static_cast<std::streamoff>(p.p_offset));
        if (!in.read(seg.data(), static_cast<std::streamsize>(seg.size()))) continue;
        for (std::uint64_t at = 0; seg.size() - at >= sizeof(Elf64_Nhdr);) {
            Elf64_Nhdr nh{};
            std::memcpy(&nh, seg.data() + at, sizeof nh);
            const std::uint64_t name_at = at + sizeof nh, desc_at = name_at + padded(nh.n_namesz);
            const std::uint64_t next = desc_at + padded(nh.n_descsz);
            if (nh.n_namesz > seg.size() || nh.n_descsz > seg.size() || next > seg.size()) break;
            // n_namesz counts the name's terminating NUL.
            if (nh.n_type == type && nh.n_namesz == name.size() + 1 &&
                std::string_view(seg.data() + name_at, name.size()) == name && seg[name_at + name.size()] == '\0')
                return true;
            at = next;
        }
    }
    return false;
}

}  // namespace tools
