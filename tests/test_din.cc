// The Dinero IV din reader (records, comments, every error with its
// line:col, garbage that must never crash or hang) and the replay of a din
// trace through the L2, checked against a reference LRU model in this file.
#include <gtest/gtest.h>

#include <fstream>
#include <list>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "npusim/npusim.h"

namespace {

std::vector<npu_din_record> read_all(const std::string &text)
{
    npu_din_reader rd;
    npu_din_reader_init(&rd, "t.din", text.data(), text.size());
    std::vector<npu_din_record> out;
    npu_din_record r;
    npu_diag d{};
    int rc;
    while ((rc = npu_din_next(&rd, &r, &d)) == 1)
        out.push_back(r);
    EXPECT_EQ(rc, 0) << d.line << ":" << d.col << ": " << d.message;
    return out;
}

// The first error in text, formatted as the user sees it.
std::string error_of(const std::string &text)
{
    npu_din_reader rd;
    npu_din_reader_init(&rd, "t.din", text.data(), text.size());
    npu_din_record r;
    npu_diag d{};
    int rc;
    while ((rc = npu_din_next(&rd, &r, &d)) == 1) {
    }
    if (rc == 0)
        return "(no error)";
    EXPECT_EQ(rc, NPU_ESYNTAX);
    char line[600];
    npu_diag_format(&d, line, sizeof line);
    return line;
}

}  // namespace

TEST(Din, ReadsEveryLabelWithOptionalSize)
{
    std::vector<npu_din_record> r = read_all("0 1000\n1 0x2000 8\n2 3000\n3 ABCdef 16\n4\n4 0\n");
    ASSERT_EQ(r.size(), 6u);
    EXPECT_EQ(r[0].kind, NPU_DIN_READ);
    EXPECT_EQ(r[0].addr, 0x1000u);
    EXPECT_EQ(r[0].size, 0u);
    EXPECT_EQ(r[1].kind, NPU_DIN_WRITE);
    EXPECT_EQ(r[1].addr, 0x2000u);
    EXPECT_EQ(r[1].size, 8u);
    EXPECT_EQ(r[2].kind, NPU_DIN_IFETCH);
    EXPECT_EQ(r[3].kind, NPU_DIN_MISC);
    EXPECT_EQ(r[3].addr, 0xabcdefu);
    EXPECT_EQ(r[3].size, 16u);
    EXPECT_EQ(r[4].kind, NPU_DIN_FLUSH);
    EXPECT_EQ(r[5].kind, NPU_DIN_FLUSH);
    EXPECT_EQ(r[5].line, 6);
}

TEST(Din, SkipsBlankLinesCommentsAndCarriageReturns)
{
    std::vector<npu_din_record> r =
        read_all("# a comment\n\n   \t\n0 10 # trailing\r\n\t1\t20\t4\t\r\n0 ffffffffffffffff\n0 0000000000000000000001");
    ASSERT_EQ(r.size(), 4u);
    EXPECT_EQ(r[0].line, 4);
    EXPECT_EQ(r[0].addr, 0x10u);
    EXPECT_EQ(r[1].line, 5);
    EXPECT_EQ(r[1].size, 4u);
    EXPECT_EQ(r[2].addr, UINT64_MAX);
    EXPECT_EQ(r[3].addr, 1u);  // leading zeros do not overflow; no final newline needed
    EXPECT_TRUE(read_all("").empty());
}

TEST(Din, ReportsEveryErrorWithLineAndColumn)
{
    EXPECT_EQ(error_of("x 10"), "t.din:1:1: expected a label 0 .. 4, found 'x'");
    EXPECT_EQ(error_of("# c\n\n7 10"), "t.din:3:1: unknown label 7 (expected 0 .. 4)");
    EXPECT_EQ(error_of("12345678901234567890 0"), "t.din:1:1: unknown label 123456789012... (expected 0 .. 4)");
    EXPECT_EQ(error_of("0x10"), "t.din:1:2: unexpected 'x' in the label");
    EXPECT_EQ(error_of("0"), "t.din:1:2: missing address after label 0");
    EXPECT_EQ(error_of("1   # no address"), "t.din:1:5: missing address after label 1");
    EXPECT_EQ(error_of("0 zz"), "t.din:1:3: expected a hexadecimal address, found 'z'");
    EXPECT_EQ(error_of("0 0x"), "t.din:1:5: expected a hexadecimal address, found end");
    EXPECT_EQ(error_of("0 12g4"), "t.din:1:5: unexpected 'g' in the address");
    EXPECT_EQ(error_of("0 1ffffffffffffffff"), "t.din:1:3: address does not fit in 64 bits");
    EXPECT_EQ(error_of("0 10 abc"), "t.din:1:6: expected a decimal size, found 'a'");
    EXPECT_EQ(error_of("0 10 -4"), "t.din:1:6: expected a decimal size, found '-'");
    EXPECT_EQ(error_of("0 10 8x"), "t.din:1:7: unexpected 'x' in the size");
    EXPECT_EQ(error_of("0 10 0"), "t.din:1:6: size must be at least 1 byte");
    EXPECT_EQ(error_of("0 1000 0x20"), "t.din:1:9: unexpected 'x' in the size");  // was "at least 1 byte"
    EXPECT_EQ(error_of("0 10 1048577"), "t.din:1:6: size exceeds 1048576 bytes");
    EXPECT_EQ(error_of("0 10 99999999999999999999999"), "t.din:1:6: size exceeds 1048576 bytes");
    EXPECT_EQ(error_of("0 10 8 9"), "t.din:1:8: unexpected '9' after the record");
    EXPECT_EQ(error_of(std::string("0 \0", 3)), "t.din:1:3: expected a hexadecimal address, found \\x00");
    EXPECT_EQ(error_of("0 10 1048576"), "(no error)");
}

TEST(Din, ReaderGoesOnAtTheNextLineAfterAnError)
{
    std::string text = "0 10\n0 zz\n1 20\n";
    npu_din_reader rd;
    npu_din_reader_init(&rd, "t.din", text.data(), text.size());
    npu_din_record r;
    npu_diag d{};
    EXPECT_EQ(npu_din_next(&rd, &r, &d), 1);
    EXPECT_EQ(npu_din_next(&rd, &r, &d), NPU_ESYNTAX);
    EXPECT_EQ(d.line, 2);
    EXPECT_EQ(npu_din_next(&rd, &r, nullptr), 1);
    EXPECT_EQ(r.kind, NPU_DIN_WRITE);
    EXPECT_EQ(r.line, 3);
    EXPECT_EQ(npu_din_next(&rd, &r, &d), 0);
    EXPECT_EQ(npu_din_next(&rd, &r, &d), 0);
}

TEST(Din, RandomGarbageNeverCrashesOrHangs)
{
    std::mt19937 rng(12345);
    const std::string alphabet = "0123456789abcdefxX #\n\n\t\r-+zg";
    npu_l2_config cfg;
    npu_l2_config_default(&cfg);
    cfg.size_bytes = 4096;
    cfg.ways = 4;
    cfg.line_bytes = 64;
    npu_l2 l2;
    ASSERT_EQ(npu_l2_init(&l2, &cfg), NPU_OK);
    for (int i = 0; i < 3000; i++) {
        std::string text(rng() % 200, '\0');
        for (char &ch : text)
            ch = (rng() % 4) ? alphabet[rng() % alphabet.size()] : char(rng());
        npu_din_reader rd;
        npu_din_reader_init(&rd, "fuzz", text.data(), text.size());
        npu_din_record r;
        npu_diag d;
        size_t calls = 0, lines = std::count(text.begin(), text.end(), '\n') + 1;
        int rc;
        while ((rc = npu_din_next(&rd, &r, &d)) != 0) {
            ASSERT_TRUE(rc == 1 || rc == NPU_ESYNTAX);
            if (rc == NPU_ESYNTAX) {
                ASSERT_GE(d.line, 1);
                ASSERT_GE(d.col, 1);
                ASSERT_NE(d.message[0], '\0');
            }
            ASSERT_LE(++calls, lines);  // every call consumes a line
        }
        npu_din_replay_config rc_cfg{64, 0, 0, 0, 0};
        npu_l2_replay_din(&l2, "fuzz", text.data(), text.size(), &rc_cfg, nullptr, nullptr);
    }
    npu_din_reader rd;
    npu_din_reader_init(&rd, "null", nullptr, 10);
    EXPECT_EQ(npu_din_next(&rd, nullptr, nullptr), 0);
    npu_l2_fini(&l2);
}

namespace {

// A set-associative LRU cache counting hits and misses: the reference.
struct RefLru {
    unsigned sets, ways, line;
    std::vector<std::list<uint64_t>> lru;
    uint64_t hits = 0, misses = 0;
    RefLru(unsigned s, unsigned w, unsigned l) : sets(s), ways(w), line(l), lru(s) {}
    void access(uint64_t addr)
    {
        uint64_t n = addr / line;
        auto &set = lru[n % sets];
        auto it = std::find(set.begin(), set.end(), n);
        if (it != set.end()) {
            hits++;
            set.erase(it);
        } else {
            misses++;
            if (set.size() == ways)
                set.pop_back();
        }
        set.push_front(n);
    }
};

}  // namespace

TEST(Din, ReplayThroughL2MatchesAReferenceLru)
{
    npu_l2_config cfg;
    npu_l2_config_default(&cfg);
    cfg.size_bytes = 8 * 4 * 64;  // 8 sets x 4 ways
    cfg.ways = 4;
    cfg.line_bytes = 64;
    npu_l2 l2;
    ASSERT_EQ(npu_l2_init(&l2, &cfg), NPU_OK);
    npu_dram_config dc;
    npu_dram_config_default(&dc);
    npu_dram dram;
    ASSERT_EQ(npu_dram_init(&dram, &dc), NPU_OK);
    npu_mem_port port = npu_dram_port(&dram);
    npu_l2_set_next_level(&l2, &port);

    RefLru ref(8, 4, 64);
    std::ostringstream din;
    std::mt19937 rng(99);
    uint64_t expect_accesses = 0, writes = 0;
    for (int i = 0; i < 4000; i++) {
        uint64_t addr = (rng() % 3 ? rng() % 4096 : rng() % 65536) & ~3ull;
        unsigned label = rng() % 3;  // read, write, fetch
        unsigned size = rng() % 8 ? 4 : 128;  // some records span two or three lines
        din << label << ' ' << std::hex << addr << std::dec;
        if (size != 4 || rng() % 2)
            din << ' ' << size;
        din << '\n';
        for (uint64_t a = addr; a < addr + size; a = (a / 64 + 1) * 64) {
            ref.access(a);
            expect_accesses++;
        }
        writes += label == 1;
    }
    std::string text = din.str();
    npu_din_replay_result res;
    npu_diag d{};
    ASSERT_EQ(npu_l2_replay_din(&l2, "r.din", text.data(), text.size(), nullptr, &res, &d), NPU_OK)
        << d.message;
    const npu_l2_stats &s = *npu_l2_get_stats(&l2);
    EXPECT_EQ(res.records, 4000u);
    EXPECT_EQ(res.accesses, expect_accesses);
    EXPECT_EQ(res.by_kind[NPU_DIN_WRITE], writes);
    EXPECT_EQ(s.accesses, expect_accesses);
    EXPECT_EQ(s.hits, ref.hits);
    EXPECT_EQ(s.misses, ref.misses);
    EXPECT_EQ(s.mshr_merges, 0u);  // one access at a time
    EXPECT_EQ(npu_dram_get_stats(&dram)->reads, s.fills);
    EXPECT_GT(res.end_cycle, 0u);
    npu_l2_fini(&l2);
    npu_dram_fini(&dram);
}

TEST(Din, ReplayStopsAtTheFirstBadRecord)
{
    npu_l2_config cfg;
    npu_l2_config_default(&cfg);
    npu_l2 l2;
    ASSERT_EQ(npu_l2_init(&l2, &cfg), NPU_OK);
    std::string text = "0 100\n0 200\n4\n0 100\n0 bad!\n0 300\n";
    npu_din_replay_result res;
    npu_diag d{};
    EXPECT_EQ(npu_l2_replay_din(&l2, "r.din", text.data(), text.size(), nullptr, &res, &d), NPU_ESYNTAX);
    EXPECT_EQ(d.line, 5);
    EXPECT_EQ(d.col, 6);  // '!' in the address
    EXPECT_EQ(res.records, 4u);
    EXPECT_EQ(res.by_kind[NPU_DIN_FLUSH], 1u);
    const npu_l2_stats &s = *npu_l2_get_stats(&l2);
    EXPECT_EQ(s.accesses, 3u);
    EXPECT_EQ(s.misses, 3u);  // the flush emptied the cache
    EXPECT_EQ(s.compulsory, 2u);
    EXPECT_EQ(s.flushes, 1u);
    npu_l2_fini(&l2);
}

// A record's bytes past 2^64 would wrap to address 0: an error naming the
// record's line (`npusim cache` used to drop them and count one access).
TEST(Din, ARecordPastTheTopOfTheAddressSpaceIsAnError)
{
    npu_l2_config cfg;
    npu_l2_config_default(&cfg);
    auto replay = [&](const std::string &text, npu_din_replay_result &res) {
        npu_l2 l2;
        EXPECT_EQ(npu_l2_init(&l2, &cfg), NPU_OK);
        npu_diag d{};
        const int rc = npu_l2_replay_din(&l2, "t.din", text.data(), text.size(), nullptr, &res, &d);
        npu_l2_fini(&l2);
        if (rc == NPU_OK)
            return std::string("ok");
        char line[600];
        npu_diag_format(&d, line, sizeof line);
        return std::string(line);
    };
    npu_din_replay_result res;
    EXPECT_EQ(replay("0 0 256\n0 ffffffffffffff80 256\n", res),
              "t.din:2: 256 bytes at 0xffffffffffffff80 run past the top of the 64-bit address space");
    EXPECT_EQ(res.records, 1u);  // the records before it
    EXPECT_EQ(res.accesses, 2u);
    // A record without a size takes the default, 4 bytes.
    EXPECT_EQ(replay("1 fffffffffffffffe\n", res),
              "t.din:1: 4 bytes at 0xfffffffffffffffe run past the top of the 64-bit address space");
    // Up to the last byte: one access per line, the last ending at 2^64.
    EXPECT_EQ(replay("0 ffffffffffffff00 256\n1 fffffffffffffffc\n4 ffffffffffffffff\n", res), "ok");
    EXPECT_EQ(res.records, 3u);
    EXPECT_EQ(res.accesses, 3u);
}

TEST(Din, PipelinedReplayOverlapsMisses)
{
    npu_l2_config cfg;
    npu_l2_config_default(&cfg);
    npu_l2 blocking, pipelined;
    ASSERT_EQ(npu_l2_init(&blocking, &cfg), NPU_OK);
    ASSERT_EQ(npu_l2_init(&pipelined, &cfg), NPU_OK);
    std::string text;
    for (int i = 0; i < 64; i++)
        text += "0 " + std::to_string(i * 100) + "\n";  // hex 0x0, 0x100, ...: distinct lines
    npu_din_replay_config gap{4, 1, 0, 0, 0};
    npu_din_replay_result a, b;
    ASSERT_EQ(npu_l2_replay_din(&blocking, "s", text.data(), text.size(), nullptr, &a, nullptr), NPU_OK);
    ASSERT_EQ(npu_l2_replay_din(&pipelined, "s", text.data(), text.size(), &gap, &b, nullptr), NPU_OK);
    // Ideal next level: a blocking miss costs the 20-cycle lookup; one per cycle overlaps them.
    EXPECT_EQ(a.end_cycle, 64u * 20);
    EXPECT_EQ(b.end_cycle, 63u + 20);
    npu_l2_fini(&blocking);
    npu_l2_fini(&pipelined);
}

namespace {

struct Replayed {
    npu_l2_stats l2;
    npu_dram_stats dram;
    npu_din_replay_result res;
};

// `text` replayed through an L2 of `cfg` on the default DRAM.
Replayed replay_text(const std::string &name, const std::string &text, const npu_l2_config &cfg,
                     unsigned issue_gap)
{
    npu_dram_config dc;
    npu_dram_config_default(&dc);
    npu_l2 l2;
    npu_dram dram;
    EXPECT_EQ(npu_l2_init(&l2, &cfg), NPU_OK);
    EXPECT_EQ(npu_dram_init(&dram, &dc), NPU_OK);
    npu_mem_port port = npu_dram_port(&dram);
    npu_l2_set_next_level(&l2, &port);
    Replayed out{};
    npu_din_replay_config rc{4, issue_gap, 0, 0, 0};
    npu_diag d{};
    EXPECT_EQ(npu_l2_replay_din(&l2, name.c_str(), text.data(), text.size(), &rc, &out.res, &d), NPU_OK)
        << d.line << ":" << d.col << ": " << d.message;
    out.l2 = *npu_l2_get_stats(&l2);
    out.dram = *npu_dram_get_stats(&dram);
    npu_l2_fini(&l2);
    npu_dram_fini(&dram);
    return out;
}

// A sample of traces/ through the default L2.
Replayed replay_sample(const std::string &name, unsigned issue_gap)
{
    std::ifstream f(std::string(NPUSIM_SOURCE_ROOT) + "/traces/" + name, std::ios::binary);
    EXPECT_TRUE(f) << name;
    const std::string text((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
    npu_l2_config cfg;
    npu_l2_config_default(&cfg);
    return replay_text(name, text, cfg, issue_gap);
}

}  // namespace

// Accesses sent faster than the DRAM fills their lines book fills far
// ahead of the access clock; each new miss then waits for an MSHR at the
// end of that queue. The cycles are the model's (the same before the L2
// stopped walking the queue one arrival at a time for every access, which
// took 1 to 7 s here where it takes 0.03 to 0.3 s).
TEST(Din, AccessesSentFasterThanFillsQueueForMshrs)
{
    npu_l2_config cfg;
    npu_l2_config_default(&cfg);
    cfg.size_bytes = 4096;
    cfg.ways = 4;
    cfg.line_bytes = 64;
    std::string text;
    for (int r = 0; r < 4; r++)
        text += "0 1 908064\n";  // 14,189 lines from address 1 on
    const struct {
        unsigned gap;
        uint64_t end;
    } cases[] = {{1, 180998}, {2, 181006}, {0, 6924232}};
    for (const auto &c : cases) {
        SCOPED_TRACE("gap " + std::to_string(c.gap));
        const Replayed r = replay_text("queue", text, cfg, c.gap);
        EXPECT_EQ(r.res.accesses, 56756u);
        EXPECT_EQ(r.res.end_cycle, c.end);
        EXPECT_EQ(r.l2.misses, 56756u);  // every line once, none merged
        EXPECT_EQ(r.l2.mshr_merges, 0u);
        EXPECT_EQ(r.l2.fills, 56756u);
    }
}

// The numbers traces/README.md quotes.
TEST(Din, SampleTracesReplayToTheirDocumentedCounts)
{
    Replayed s = replay_sample("stream_read.din", 0);
    EXPECT_EQ(s.res.records, 256u);
    EXPECT_EQ(s.l2.hits, 128u);
    EXPECT_EQ(s.l2.misses, 128u);
    EXPECT_EQ(s.l2.compulsory, 128u);
    EXPECT_EQ(s.dram.bytes_read, 16384u);
    EXPECT_EQ(s.res.end_cycle, 18432u);
    s = replay_sample("stream_read.din", 1);
    EXPECT_EQ(s.l2.misses, 256u);
    EXPECT_EQ(s.l2.mshr_merges, 128u);
    EXPECT_EQ(s.res.end_cycle, 500u);

    s = replay_sample("stream_read_write.din", 0);
    EXPECT_EQ(s.res.records, 513u);
    EXPECT_EQ(s.res.by_kind[NPU_DIN_FLUSH], 1u);
    EXPECT_EQ(s.l2.misses, 512u);
    EXPECT_EQ(s.l2.compulsory, 512u);
    EXPECT_EQ(s.l2.fills, 256u);
    EXPECT_EQ(s.l2.writebacks, 256u);
    EXPECT_EQ(s.dram.bytes_read, 32768u);
    EXPECT_EQ(s.dram.bytes_written, 32768u);
    EXPECT_EQ(s.res.end_cycle, 37220u);

    s = replay_sample("strided_conflict.din", 0);
    EXPECT_EQ(s.res.records, 240u);
    EXPECT_EQ(s.l2.hits, 0u);
    EXPECT_EQ(s.l2.compulsory, 24u);
    EXPECT_EQ(s.l2.conflict, 216u);
    EXPECT_EQ(s.l2.capacity, 0u);
}
