// ccnuma-vm's boot kernel (tools/ccnuma-vm/kernel_image.hpp): the ELF image with a PVH entry that
// it decompresses from the cached bzImage, or the bzImage itself with the reason. Each test
// builds a bzImage around a synthetic ELF in a cache of its own, with a fake QEMU first on PATH,
// and reads `ccnuma-vm --setup`: nothing boots, so these run in every build. The last test reads
// the accelerator the fake QEMU was given (tools/ccnuma-vm/qemu.hpp) the same way, and the
// console tail a guest failure prints from what the fake QEMU wrote as the guest's console.

#include "../support/run.hpp"

#include <elf.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

namespace {

namespace fs = std::filesystem;
using test_support::quote;
using test_support::run;
using test_support::slurp;

const std::string vm = CCNUMA_VM;

void put(std::string& b, std::size_t at, std::uint64_t v, std::size_t bytes) {
    for (std::size_t i = 0; i < bytes; ++i) b[at + i] = static_cast<char>((v >> (8 * i)) & 0xff);
}

// A 64-bit ELF header, one PT_NOTE segment holding a note (name, type), and `tail` bytes after
// it, as the relocations that follow a real kernel's ELF image in its payload.
std::string elf_with_note(const std::string& name, std::uint32_t type, std::size_t tail = 3000) {
    std::string note(sizeof(Elf64_Nhdr), '\0');
    Elf64_Nhdr nh{static_cast<Elf64_Word>(name.size() + 1), 4, type};
    std::memcpy(note.data(), &nh, sizeof nh);
    note += name;
    note.append(((name.size() + 1 + 3) & ~std::size_t{3}) - name.size(), '\0');
    note.append("\x00\x00\x00\x01", 4);
    Elf64_Ehdr eh{};
    std::memcpy(eh.e_ident, ELFMAG, SELFMAG);
    eh.e_ident[EI_CLASS] = ELFCLASS64;
    eh.e_ident[EI_DATA] = ELFDATA2LSB;
    eh.e_ident[EI_VERSION] = EV_CURRENT;
    eh.e_type = ET_EXEC;
    eh.e_machine = EM_X86_64;
    eh.e_version = EV_CURRENT;
    eh.e_phoff = sizeof eh;
    eh.e_ehsize = sizeof eh;
    eh.e_phentsize = sizeof(Elf64_Phdr);
    eh.e_phnum = 1;
    Elf64_Phdr ph{};
    ph.p_type = PT_NOTE;
    ph.p_offset = sizeof eh + sizeof ph;
    ph.p_filesz = note.size();
    std::string elf(reinterpret_cast<const char*>(&eh), sizeof eh);
    elf.append(reinterpret_cast<const char*>(&ph), sizeof ph);
    elf += note;
    for (std::size_t i = 0; i < tail; ++i) elf.push_back(static_cast<char>(i * 7 + 1));
    return elf;
}

std::string pvh_elf() { return elf_with_note("Xen", 18); }

// A cache with a busybox, a kernel package line and `bzimage` as its vmlinuz, and a fake QEMU.
struct cache {
    fs::path root, dir, bin;
    cache(const std::string& name, const std::string& bzimage) {
        root = fs::path(::testing::TempDir()) / ("ccnuma_vm_kernel_" + name + "_" + std::to_string(::getpid()));
        fs::remove_all(root);
        dir = root / "cache";
        bin = root / "bin";
        fs::create_directories(dir / "kernel");
        fs::create_directories(bin);
        std::ofstream(dir / "busybox") << "not run\n";
        std::ofstream(dir / "kernel" / "package") << "linux-image-test 1.0\n";
        std::ofstream(dir / "kernel" / "vmlinuz", std::ios::binary) << bzimage;
        std::ofstream(bin / "qemu-system-x86_64") << "#!/bin/sh\nexit 1\n";
        fs::permissions(bin / "qemu-system-x86_64", fs::perms::owner_all);
    }
    ~cache() {
        std::error_code ec;
        fs::remove_all(root, ec);
    }
    test_support::result setup() const { return vm_with("--setup"); }
    test_support::result vm_with(const std::string& arguments) const {
        return run("CCNUMA_VM_CACHE=" + quote(dir.string()) + " PATH=" + quote(bin.string()) + ":\"$PATH\" " + quote(vm) +
                   " " + arguments);
    }
    // The fake QEMU writes its arguments, one a line, to `file` (the last call's) and fails.
    void record_qemu_arguments(const fs::path& file) const {
        std::ofstream(bin / "qemu-system-x86_64") << "#!/bin/sh\nprintf '%s\\n' \"$@\" > " << quote(file.string())
                                                  << "\nexit 1\n";
    }
    // The fake QEMU runs `body` (sh) instead: the guest's console is its fd 3, the status port fd 6.
    void qemu_runs(const std::string& body) const {
        std::ofstream(bin / "qemu-system-x86_64") << "#!/bin/sh\n" << body << "\n";
    }
    std::string boot_line(const test_support::result& r) const {
        const auto at = r.out.find("\nboot    ");
        return at == std::string::npos ? std::string() : r.out.substr(at + 9, r.out.find('\n', at + 1) - at - 9);
    }
    std::vector<std::string> kernel_files() const {
        std::vector<std::string> v;
        for (const auto& e : fs::directory_iterator(dir / "kernel")) v.push_back(e.path().filename().string());
        std::sort(v.begin(), v.end());
        return v;
    }
};

// `data` compressed by `program` (zstd, xz, gzip), as the kernel's build does.
std::string compress(const std::string& program, const std::string& data) {
    const fs::path in = fs::path(::testing::TempDir()) / ("ccnuma_vm_kernel_" + std::to_string(::getpid()) + ".in");
    std::ofstream(in, std::ios::binary) << data;
    const auto r = run(program + " -c -q " + quote(in.string()));
    fs::remove(in);
    EXPECT_EQ(r.status, 0) << program << ": " << r.err;
    return r.out;
}

// A bzImage of boot protocol `version` whose payload is `compressed`, followed by a 4-byte
// little-endian size trailer when `trailer` is not 0 (zstd and xz), as mkpiggy lays it out.
std::string bzimage(const std::string& compressed, std::uint32_t trailer, std::uint16_t version = 0x020f,
                    std::uint32_t length_override = 0, std::size_t setup_sects = 3) {
    const std::size_t payload_offset = 0x140;
    // setup_sects 0 stands for 4 (boot.rst).
    std::string b(((setup_sects == 0 ? 4 : setup_sects) + 1) * 512 + payload_offset, '\0');
    b[0x1f1] = static_cast<char>(setup_sects);
    put(b, 0x1fe, 0xaa55, 2);
    b.replace(0x202, 4, "HdrS");
    put(b, 0x206, version, 2);
    const std::size_t length = compressed.size() + (trailer ? 4 : 0);
    put(b, 0x248, payload_offset, 4);
    put(b, 0x24c, length_override ? length_override : length, 4);
    b += compressed;
    if (trailer) {
        std::string t(4, '\0');
        put(t, 0, trailer, 4);
        b += t;
    }
    b.append(512, '\x90');
    return b;
}

void expect_pvh(const cache& c, const std::string& elf) {
    const auto r = c.setup();
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_EQ(c.boot_line(r), (c.dir / "kernel" / "vmlinux").string() + " (PVH entry)") << r.out;
    EXPECT_NE(r.err.find("decompressing"), std::string::npos) << r.err;
    EXPECT_EQ(slurp((c.dir / "kernel" / "vmlinux").string()), elf) << "the cached ELF is not the payload";
    EXPECT_EQ(c.kernel_files(), (std::vector<std::string>{"package", "vmlinux", "vmlinuz"})) << "a temporary file was left";
    // The next run takes the cached image as it is.
    const auto again = c.setup();
    EXPECT_EQ(c.boot_line(again), (c.dir / "kernel" / "vmlinux").string() + " (PVH entry)");
    EXPECT_EQ(again.err.find("decompressing"), std::string::npos) << again.err;
}

void expect_pvh(const std::string& program) {
    const std::string elf = pvh_elf();
    const cache c(program, bzimage(compress(program, elf), program == "gzip" ? 0 : static_cast<std::uint32_t>(elf.size())));
    expect_pvh(c, elf);
}

TEST(VmKernel, ZstdPayloadWithAPvhNoteIsBootedAsItsElfImage) { expect_pvh("zstd"); }
TEST(VmKernel, XzPayloadWithAPvhNoteIsBootedAsItsElfImage) { expect_pvh("xz"); }
TEST(VmKernel, GzipPayloadWithAPvhNoteIsBootedAsItsElfImage) { expect_pvh("gzip"); }

TEST(VmKernel, SetupSectorsZeroStandForFour) {
    const std::string elf = pvh_elf();
    expect_pvh(cache("sects0", bzimage(compress("zstd", elf), static_cast<std::uint32_t>(elf.size()), 0x020f, 0, 0)), elf);
}

// A run killed while decompressing leaves its temporary files; the next one removes them.
TEST(VmKernel, TemporaryFilesOfAKilledRunAreRemoved) {
    const std::string elf = pvh_elf();
    const cache c("stale", bzimage(compress("zstd", elf), static_cast<std::uint32_t>(elf.size())));
    std::ofstream(c.dir / "kernel" / "vmlinux.tmp-1.payload") << "left over";
    std::ofstream(c.dir / "kernel" / "vmlinux.tmp-1.elf") << "left over";
    expect_pvh(c, elf);
}

// The bzImage is booted, the reason is said, and the cache remembers it: the next run neither
// decompresses again nor says anything else.
void expect_compressed(const cache& c, const std::string& reason, bool remembered = true) {
    const auto r = c.setup();
    ASSERT_EQ(r.status, 0) << r.err;
    const std::string line = c.boot_line(r);
    EXPECT_EQ(line.rfind((c.dir / "kernel" / "vmlinuz").string() + " (compressed: ", 0), 0u) << r.out;
    EXPECT_NE(line.find(reason), std::string::npos) << line;
    EXPECT_NE(r.err.find("booting the compressed kernel: "), std::string::npos) << r.err;
    EXPECT_FALSE(fs::exists(c.dir / "kernel" / "vmlinux"));
    const std::vector<std::string> files = remembered ? std::vector<std::string>{"package", "vmlinux.none", "vmlinuz"}
                                                      : std::vector<std::string>{"package", "vmlinuz"};
    EXPECT_EQ(c.kernel_files(), files) << "a temporary file was left, or the reason was (not) remembered";
    const auto again = c.setup();
    EXPECT_EQ(c.boot_line(again), line);
    // A reason in the file is not looked for again; one that may pass is.
    EXPECT_EQ(again.err.find("decompressing") == std::string::npos, remembered) << again.err;
}

TEST(VmKernel, AnElfWithoutThePvhNoteBootsTheBzImage) {
    const std::string elf = elf_with_note("Xen", 17);  // another Xen note, not the entry point
    const cache c("nopvh", bzimage(compress("zstd", elf), static_cast<std::uint32_t>(elf.size())));
    expect_compressed(c, "has no PVH entry note");
}

TEST(VmKernel, ANoteOfAnotherOwnerIsNotThePvhEntry) {
    const std::string elf = elf_with_note("GNU", 18);
    const cache c("gnu", bzimage(compress("zstd", elf), static_cast<std::uint32_t>(elf.size())));
    expect_compressed(c, "has no PVH entry note");
}

TEST(VmKernel, ASizeOtherThanTheTrailerSaysIsRefused) {
    const std::string elf = pvh_elf();
    const cache c("size", bzimage(compress("zstd", elf), static_cast<std::uint32_t>(elf.size() + 1)));
    expect_compressed(c, "decompressed to " + std::to_string(elf.size()) + " bytes, where its trailer names " +
                             std::to_string(elf.size() + 1));
}

TEST(VmKernel, ACorruptPayloadIsReportedByItsDecompressor) {
    std::string z = compress("zstd", pvh_elf());
    z.resize(z.size() / 2);  // a truncated frame
    const cache c("corrupt", bzimage(z, 1000));
    expect_compressed(c, "zstd could not decompress the payload of ");  // its data: remembered
}

// A decompressor killed by a signal (the OOM killer, say) is a reason that may pass: the bzImage
// boots this time, and the next run tries again.
TEST(VmKernel, AKilledDecompressorIsNotRemembered) {
    const std::string elf = pvh_elf();
    const cache c("killed", bzimage(compress("zstd", elf), static_cast<std::uint32_t>(elf.size())));
    std::ofstream(c.bin / "zstd") << "#!/bin/sh\nkill -9 $$\n";
    fs::permissions(c.bin / "zstd", fs::perms::owner_all);
    expect_compressed(c, "zstd could not decompress the payload of " + (c.dir / "kernel" / "vmlinuz").string() +
                             " (status 137)",
                      false);
}

TEST(VmKernel, AFileWithoutASetupHeaderIsNotABzImage) {
    const cache c("plain", std::string(4096, 'x'));
    expect_compressed(c, "has no bzImage setup header");
}

TEST(VmKernel, AShortFileIsNotABzImage) {
    const cache c("short", "MZ");
    expect_compressed(c, "is too short for a bzImage setup header");
}

TEST(VmKernel, AnOldBootProtocolDoesNotLocateItsPayload) {
    const std::string elf = pvh_elf();
    const cache c("old", bzimage(compress("zstd", elf), static_cast<std::uint32_t>(elf.size()), 0x0206));
    expect_compressed(c, "uses boot protocol 2.06");
}

TEST(VmKernel, APayloadBeyondTheFileIsRefused) {
    const std::string elf = pvh_elf();
    const cache c("beyond", bzimage(compress("zstd", elf), static_cast<std::uint32_t>(elf.size()), 0x020f, 0x7fffffff));
    expect_compressed(c, "does not lie inside the file");
}

TEST(VmKernel, APayloadThatStartsBeyondTheFileIsRefused) {
    const std::string elf = pvh_elf();
    std::string b = bzimage(compress("zstd", elf), static_cast<std::uint32_t>(elf.size()));
    put(b, 0x248, 0x7fff0000, 4);
    expect_compressed(cache("start", b), "does not lie inside the file");
}

TEST(VmKernel, AHeaderThatNamesNoPayloadIsSaidSo) {
    const std::string elf = pvh_elf();
    std::string b = bzimage(compress("zstd", elf), static_cast<std::uint32_t>(elf.size()));
    put(b, 0x248, 0, 4);
    expect_compressed(cache("nopayload", b), "its setup header names no payload");
}

TEST(VmKernel, AnUnknownCompressionIsNamed) {
    const cache c("lz4", bzimage(std::string("\x02\x21\x4c\x18", 4) + std::string(64, 'z'), 1000));
    expect_compressed(c, "in a compression ccnuma-vm does not decompress (zstd, xz and gzip it does)");
}

// Which accelerator QEMU is given for each --accel word; auto takes tcg where the KVM probe fails
// (here it always does: the fake QEMU fails every boot). tcg runs every vCPU on one host thread:
// under the multi-threaded translator a guest kernel has panicked in CI (docs/tools/ccnuma-vm.md).
TEST(VmAccel, EachWordGivesQemuItsAccelerator) {
    const std::string elf = pvh_elf();
    const cache c("accel", bzimage(compress("zstd", elf), static_cast<std::uint32_t>(elf.size())));
    const fs::path args = c.root / "qemu-arguments";
    c.record_qemu_arguments(args);
    struct expected {
        std::string option, accel, cpu, said;
    };
    for (const expected& e : {expected{"--accel tcg", "tcg,thread=single", "max", "(tcg)"},
                              expected{"--accel tcg-multi", "tcg,thread=multi", "max", "(tcg-multi)"},
                              expected{"--accel kvm", "kvm", "host", "(kvm)"},
                              expected{"--accel auto", "tcg,thread=single", "max", "(tcg)"},
                              expected{"", "tcg,thread=single", "max", "(tcg)"}}) {
        SCOPED_TRACE(e.option.empty() ? "no --accel" : e.option);
        fs::remove(args);
        const auto r = c.vm_with(e.option + " -v -- true");
        EXPECT_EQ(r.status, 125) << r.err;
        EXPECT_NE(r.err.find("the guest did not boot"), std::string::npos) << r.err;
        EXPECT_NE(r.err.find(" total "), std::string::npos) << r.err;
        EXPECT_NE(r.err.find(e.said + "\n"), std::string::npos) << r.err;
        const std::string given = slurp(args.string());
        EXPECT_NE(given.find("\n-accel\n" + e.accel + "\n-cpu\n" + e.cpu + "\n"), std::string::npos) << given;
        EXPECT_EQ(given.find("\n-accel\n", given.find("\n-accel\n") + 1), std::string::npos) << "two accelerators: " << given;
    }
    const auto bad = c.vm_with("--accel tcg-single -- true");
    EXPECT_EQ(bad.status, 2);
    EXPECT_EQ(bad.err, "ccnuma-vm: --accel tcg-single is unknown (expected auto, tcg, tcg-multi or kvm)\n");
}

// A guest failure prints the console log's last lines before its message when asked, so that a
// CI log keeps a panic's trace (CI lost one: the kept file was on the CI machine's /tmp). The
// fake QEMU says the command is running, then writes 50 numbered lines, an escape sequence and a
// panic to the console, with the kernel's CR LF line ends, and exits as panic=-1 makes QEMU do.
TEST(VmConsoleTail, AGuestFailurePrintsTheLastLinesOfItsConsoleWhenAsked) {
    const std::string elf = pvh_elf();
    const cache c("tail", bzimage(compress("zstd", elf), static_cast<std::uint32_t>(elf.size())));
    c.qemu_runs(
        "printf 'booted\\nrunning\\n' >&6\n"
        "i=1; while [ $i -le 50 ]; do printf '[    0.%03d] line %d\\r\\n' $i $i >&3; i=$((i + 1)); done\n"
        "printf '\\033]0;title\\007\\033[31mred\\r\\n' >&3\n"
        "printf 'Kernel panic - not syncing: fake\\r\\n---[ end Kernel panic - not syncing: fake ]---\\r\\n\\r\\n' >&3\n"
        "exit 0");
    const fs::path tmp = c.root / "tmp";
    fs::create_directories(tmp);
    auto vm_run = [&](const std::string& env, const std::string& options) {
        // CI sets CCNUMA_VM_CONSOLE_TAIL (scripts/test.sh): empty is unset, and `env` may set it again.
        return run("CCNUMA_VM_CONSOLE_TAIL= " + env + " TMPDIR=" + quote(tmp.string()) + " CCNUMA_VM_CACHE=" + quote(c.dir.string()) +
                   " PATH=" + quote(c.bin.string()) + ":\"$PATH\" " + quote(vm) + " --accel tcg " + options +
                   " -- true");
    };
    const std::string message = "ccnuma-vm: guest kernel panic: Kernel panic - not syncing: fake (console log: " + tmp.string() + "/ccnuma-vm-";
    auto lines_of = [](const std::string& text) {
        std::vector<std::string> v;
        std::istringstream in(text);
        for (std::string l; std::getline(in, l);) v.push_back(l);
        return v;
    };
    auto expect_tail = [&](const test_support::result& r, const std::vector<std::string>& want) {
        EXPECT_EQ(r.status, 125) << r.err;
        EXPECT_TRUE(r.out.empty()) << r.out;
        const auto got = lines_of(r.err);
        ASSERT_EQ(got.size(), want.size() + 1) << r.err;
        for (std::size_t i = 0; i < want.size(); ++i) EXPECT_EQ(got[i], want[i]);
        EXPECT_EQ(got.back().rfind(message, 0), 0u) << r.err;
    };
    const std::string panic = "ccnuma-vm: console: Kernel panic - not syncing: fake";
    const std::string end = "ccnuma-vm: console: ---[ end Kernel panic - not syncing: fake ]---";
    const std::string red = "ccnuma-vm: console: ?]0;title??[31mred";  // no escape reaches the terminal

    {
        SCOPED_TRACE("--console-tail 4");
        expect_tail(vm_run("", "--console-tail 4"), {"ccnuma-vm: the last 4 lines of the guest's console log:",
                                                     "ccnuma-vm: console: [    0.050] line 50", red, panic, end});
    }
    {
        SCOPED_TRACE("CCNUMA_VM_CONSOLE_TAIL=1");
        expect_tail(vm_run("CCNUMA_VM_CONSOLE_TAIL=1", ""),
                    {"ccnuma-vm: the last 1 line of the guest's console log:", end});
    }
    {
        SCOPED_TRACE("the option over the variable, and more lines than the log has");
        std::vector<std::string> all = {"ccnuma-vm: the guest's console log, all 53 lines:"};
        for (int i = 1; i <= 50; ++i) {
            char line[64];
            std::snprintf(line, sizeof line, "ccnuma-vm: console: [    0.%03d] line %d", i, i);
            all.push_back(line);
        }
        all.insert(all.end(), {red, panic, end});
        expect_tail(vm_run("CCNUMA_VM_CONSOLE_TAIL=2", "--console-tail 100000"), all);
    }
    {
        SCOPED_TRACE("the option over a malformed variable, which --help ignores too");
        expect_tail(vm_run("CCNUMA_VM_CONSOLE_TAIL=x", "--console-tail 1"),
                    {"ccnuma-vm: the last 1 line of the guest's console log:", end});
        const auto help = run("CCNUMA_VM_CONSOLE_TAIL=x " + quote(vm) + " --help");
        EXPECT_EQ(help.status, 0) << help.err;
        EXPECT_NE(help.out.find("--console-tail N"), std::string::npos) << help.out;
    }
    for (const auto& [env, options] : {std::pair<std::string, std::string>{"", ""},
                                       {"CCNUMA_VM_CONSOLE_TAIL=", ""},
                                       {"CCNUMA_VM_CONSOLE_TAIL=7", "--console-tail 0"}}) {
        SCOPED_TRACE("no tail: " + env + " " + options);
        const auto r = vm_run(env, options);
        expect_tail(r, {});
        // The kept log holds the whole console whatever was printed.
        const auto at = r.err.find("(console log: ");
        ASSERT_NE(at, std::string::npos) << r.err;
        const std::string log = r.err.substr(at + 14, r.err.size() - at - 14 - 2);  // up to ")\n"
        const std::string kept = slurp(log);
        EXPECT_NE(kept.find("[    0.001] line 1\r\n"), std::string::npos) << log;
        EXPECT_NE(kept.find("---[ end Kernel panic - not syncing: fake ]---"), std::string::npos) << log;
    }
    for (const auto& [env, options, said] :
         {std::tuple<std::string, std::string, std::string>{"", "--console-tail x", "--console-tail needs a number of lines from 0 to 100000, not \"x\""},
          {"", "--console-tail 100001", "--console-tail needs a number of lines from 0 to 100000, not \"100001\""},
          {"", "--console-tail -1", "--console-tail needs a number of lines from 0 to 100000, not \"-1\""},
          {"CCNUMA_VM_CONSOLE_TAIL=1e3", "", "CCNUMA_VM_CONSOLE_TAIL needs a number of lines from 0 to 100000, not \"1e3\""},
          {"CCNUMA_VM_CONSOLE_TAIL=99999999999999999999", "",
           "CCNUMA_VM_CONSOLE_TAIL needs a number of lines from 0 to 100000, not \"99999999999999999999\""}}) {
        SCOPED_TRACE(env + " " + options);
        const auto r = vm_run(env, options);
        EXPECT_EQ(r.status, 2);
        EXPECT_EQ(r.err, "ccnuma-vm: " + said + "\n");
    }
}

}  // namespace
