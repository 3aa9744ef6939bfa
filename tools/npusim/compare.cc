// Side-by-side comparison of kernels.
#include "compare.h"

#include <cmath>

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <optional>
#include <sstream>

#include "error.h"
#include "parallel.h"
#include "report.h"

namespace npusim {
namespace {

const nlohmann::json *find(const nlohmann::json &j, const std::string &dotted)
{
    const nlohmann::json *cur = &j;
    std::stringstream ss(dotted);
    std::string part;
    while (std::getline(ss, part, '.')) {
        if (cur->is_array()) {
            size_t i = std::stoul(part);
            if (i >= cur->size())
                return nullptr;
            cur = &(*cur)[i];
        } else if (cur->is_object() && cur->contains(part)) {
            cur = &(*cur)[part];
        } else {
            return nullptr;
        }
    }
    return cur;
}

double num(const nlohmann::json &j, const std::string &dotted)
{
    const nlohmann::json *cur = &j;
    std::stringstream ss(dotted);
    std::string part;
    while (std::getline(ss, part, '.')) {
        if (cur->is_array()) {
            size_t i = std::stoul(part);
            if (i >= cur->size())
                return 0.0;
            cur = &(*cur)[i];
        } else if (cur->is_object() && cur->contains(part)) {
            cur = &(*cur)[part];
        } else {
            return 0.0;
        }
    }
    if (cur->is_null())
        return INFINITY;  // an infinite error is null in the report
    return cur->is_number() ? cur->get<double>() : 0.0;
}

std::string str(const nlohmann::json &j, const std::string &key)
{
    return j.contains(key) && j[key].is_string() ? j[key].get<std::string>() : "";
}

// What bound the run: bound.binding_resource ("unit lsu", "dma engine",
// "dram channels", "dependency chain"); reports written before it existed
// name the compute resource, or the kind of bound when that was not compute.
std::string binding_resource(const nlohmann::json &r)
{
    if (!r.contains("bound"))
        return "";
    const nlohmann::json &b = r["bound"];
    if (b.contains("binding_resource"))
        return str(b, "binding_resource");
    return str(b, "binding") == "resource" ? str(b, "resource") : str(b, "binding");
}

// The rows of the comparison: label, how to read it, printf format.
enum class Scale { Plain, PercentOfCycles, PercentOfSlots, Percent };
struct Row {
    std::string label, key;
    const char *fmt;
    Scale scale;
};

std::vector<Row> rows_for(const std::vector<nlohmann::json> &reports)
{
    std::vector<Row> rows = {
        {"cycles", "cycles", "%.0f", Scale::Plain},
        {"cycles/element", "cycles_per_element", "%.4f", Scale::Plain},
        {"instructions/vector", "instructions_per_vector", "%.2f", Scale::Plain},
        {"IPC", "ipc", "%.3f", Scale::Plain},
    };
    // A functional run has no issue slots: no histogram rows, not a row of 0 slots.
    if (!reports.empty() && find(reports[0], "issue.width"))
        for (unsigned k = 0, width = unsigned(num(reports[0], "issue.width")); k <= width; k++)
            rows.push_back({"issue " + std::to_string(k) + "/cycle", "issue.histogram." + std::to_string(k), "%.1f%%", Scale::PercentOfCycles});
    for (const char *s : {"raw", "waw", "unit_busy", "slot", "ub_bank", "dma_wait", "sync", "branch", "drain"})
        rows.push_back({std::string("stall ") + s, std::string("stalls.") + s, "%.1f%%", Scale::PercentOfCycles});
    // A slot conflict never empties a whole cycle (docs/timing.md, T12): its
    // cost is the issue slots it leaves empty.
    rows.push_back({"slots lost to slot", "issue.slots_lost.slot", "%.1f%%", Scale::PercentOfSlots});
    for (const char *u : {"valu", "sfu", "lsu", "scalar", "dma"})
        rows.push_back({std::string("util ") + u, std::string("units.") + u + ".utilisation", "%.1f%%", Scale::Percent});
    rows.push_back({"L2 hit rate", "l2.hit_rate", "%.3f", Scale::Plain});
    rows.push_back({"DRAM bytes", "dram.bytes_read+written", "%.0f", Scale::Plain});
    rows.push_back({"efficiency", "bound.efficiency", "%.3f", Scale::Plain});
    rows.push_back({"max ULP", "accuracy.max_ulp", "%.3g", Scale::Plain});
    if (!reports.empty() && reports[0].contains("against")) {
        const std::string ref = reports[0]["against"].value("reference", "");
        rows.push_back({"vs " + ref + " max abs err", "against.max_abs_err", "%.3g", Scale::Plain});
    }
    return rows;
}

// A row's figure, or none where the run did not compute it: a functional
// run counts no cycles, stalls or units, a run without an L2 no hit rate.
// Every writer shows none as none (-, null, an empty cell), never as 0.
std::optional<double> value(const nlohmann::json &r, const Row &row)
{
    if (row.key == "dram.bytes_read+written") {
        if (!find(r, "dram.bytes_read"))
            return std::nullopt;
        return num(r, "dram.bytes_read") + num(r, "dram.bytes_written");
    }
    if (!find(r, row.key))
        return std::nullopt;
    double v = num(r, row.key);
    if (row.scale == Scale::PercentOfCycles || row.scale == Scale::PercentOfSlots) {
        double cycles = num(r, "cycles") * (r.contains("cores") ? double(r["cores"].size()) : 1.0);
        if (row.scale == Scale::PercentOfSlots)
            cycles *= num(r, "issue.width");
        return cycles > 0 ? 100.0 * v / cycles : 0.0;
    }
    return row.scale == Scale::Percent ? 100.0 * v : v;
}

}  // namespace

std::vector<nlohmann::json> run_compare(const CompareOptions &opts)
{
    const size_t n = opts.kernels.size();
    std::vector<nlohmann::json> reports(n);
    parallel_for(n, opts.jobs, [&](size_t i) {
        RunOptions run = opts.run;
        run.kernel = opts.kernels[i];
        reports[i] = report_json(run_kernel(run));
    });
    return reports;
}

std::string compare_table(const std::vector<nlohmann::json> &reports)
{
    std::ostringstream os;
    char buf[96];
    int w = 12;
    for (const auto &r : reports)
        w = std::max(w, int((str(r, "kernel") + " " + str(r, "dtype")).size()) + 2);
    std::snprintf(buf, sizeof buf, "%-22s", "");
    os << buf;
    for (const auto &r : reports) {
        std::snprintf(buf, sizeof buf, "%*s", w, (str(r, "kernel") + " " + str(r, "dtype")).c_str());
        os << buf;
    }
    os << "\n";
    for (const Row &row : rows_for(reports)) {
        std::snprintf(buf, sizeof buf, "%-22s", row.label.c_str());
        os << buf;
        for (const auto &r : reports) {
            char cell[48];
            const std::optional<double> v = value(r, row);
            if (!v)
                std::snprintf(cell, sizeof cell, "-");
            else
                std::snprintf(cell, sizeof cell, row.fmt, *v);
            std::snprintf(buf, sizeof buf, "%*s", w, cell);
            os << buf;
        }
        os << "\n";
    }
    std::snprintf(buf, sizeof buf, "%-22s", "binding");
    os << buf;
    for (const auto &r : reports) {
        const std::string b = r.contains("bound") ? binding_resource(r) : "-";
        std::snprintf(buf, sizeof buf, " %*s", w - 1, b.c_str());
        os << buf;
    }
    os << "\n";
    return os.str();
}

nlohmann::json compare_json(const std::vector<nlohmann::json> &reports)
{
    nlohmann::json out = nlohmann::json::array();
    std::vector<Row> rows = rows_for(reports);
    for (const auto &r : reports) {
        nlohmann::json o = {{"kernel", str(r, "kernel")}, {"dtype", str(r, "dtype")}};
        for (const Row &row : rows) {
            const std::optional<double> v = value(r, row);
            o[row.label] = v ? nlohmann::json(*v) : nlohmann::json();
        }
        o["binding"] = r.contains("bound") ? nlohmann::json(binding_resource(r)) : nlohmann::json();
        o["stalls"] = r.contains("stalls") ? r["stalls"] : nlohmann::json();
        o["cycles_total"] = r.contains("cycles") ? r["cycles"] : nlohmann::json();
        out.push_back(o);
    }
    return out;
}

std::string compare_csv(const std::vector<nlohmann::json> &reports)
{
    std::vector<Row> rows = rows_for(reports);
    std::string csv = "kernel,dtype";
    for (const Row &row : rows)
        csv += "," + row.label;
    csv += "\n";
    for (const auto &r : reports) {
        csv += str(r, "kernel") + "," + str(r, "dtype");
        for (const Row &row : rows) {
            // None, or an infinite error (null in the JSON): an empty cell,
            // as merge writes one, never "inf" beside merge's empty cell.
            char cell[48] = "";
            if (const std::optional<double> v = value(r, row); v && std::isfinite(*v))
                std::snprintf(cell, sizeof cell, "%.6g", *v);
            csv += std::string(",") + cell;
        }
        csv += "\n";
    }
    return csv;
}

}  // namespace npusim
