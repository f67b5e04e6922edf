#pragma once
// The shared libraries an ELF executable names (DT_NEEDED), read from the file itself: ldd would
// run the program's loader, and what is asked here is only which OpenMP runtime it links.

#include <elf.h>

#include <cstring>
#include <fstream>
#include <string>
#include <vector>

namespace tools {

/// DT_NEEDED entries of a 64-bit little-endian ELF file ("libgomp.so.1", ...); empty for
/// anything else (scripts, static executables, unreadable or malformed files).
inline std::vector<std::string> elf_needed(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    Elf64_Ehdr eh{};
    if (!in.read(reinterpret_cast<char*>(&eh), sizeof eh) || std::memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 ||
        eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_ident[EI_DATA] != ELFDATA2LSB || eh.e_phentsize != sizeof(Elf64_Phdr) ||
        eh.e_phnum > 4096)
        return {};
    std::vector<Elf64_Phdr> ph(eh.e_phnum);
    in.seekg(static_cast<std::streamoff>(eh.e_phoff));
    if (!in.read(reinterpret_cast<char*>(ph.data()), static_cast<std::streamsize>(ph.size() * sizeof(Elf64_Phdr))))
        return {};
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

}  // namespace tools
