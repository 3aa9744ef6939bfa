#include "yaml_document.h"

#include <yaml-cpp/depthguard.h>
#include <yaml-cpp/eventhandler.h>

#include <cstdio>
#include <sstream>

#include "error.h"

namespace npusim {
namespace {

// Records where each document starts; the nodes themselves come from
// YAML::Load once the text is known to hold one document.
struct DocumentStarts : YAML::EventHandler {
    std::vector<YAML::Mark> starts;
    void OnDocumentStart(const YAML::Mark &m) override { starts.push_back(m); }
    void OnDocumentEnd() override {}
    void OnNull(const YAML::Mark &, YAML::anchor_t) override {}
    void OnAlias(const YAML::Mark &, YAML::anchor_t) override {}
    void OnScalar(const YAML::Mark &, const std::string &, YAML::anchor_t, const std::string &) override {}
    void OnSequenceStart(const YAML::Mark &, const std::string &, YAML::anchor_t, YAML::EmitterStyle::value) override {}
    void OnSequenceEnd() override {}
    void OnMapStart(const YAML::Mark &, const std::string &, YAML::anchor_t, YAML::EmitterStyle::value) override {}
    void OnMapEnd() override {}
};

}  // namespace

std::string yaml_where(const std::string &file, const YAML::Mark &m)
{
    return file + ":" + std::to_string(m.line + 1) + ":" + std::to_string(m.column + 1) + ": ";
}

bool yaml_quoted(const YAML::Node &n)
{
    return n.IsScalar() && n.Tag() == "!";
}

std::string beside_spec(const std::string &file, const std::string &spec_path)
{
    if (file.empty() || file[0] == '/')
        return file;
    const size_t slash = spec_path.rfind('/');
    return (slash == std::string::npos ? "" : spec_path.substr(0, slash + 1)) + file;
}

YAML::Node load_one_yaml_document(const std::string &text, const std::string &file, const std::string &what)
{
    // YAML text holds no control characters but tab, line feed and carriage
    // return; yaml-cpp read a NUL as an escape and printed the byte in its
    // message, over two lines.
    size_t line = 1, col = 1;
    for (const char ch : text) {
        const unsigned char c = static_cast<unsigned char>(ch);
        if ((c < 0x20 && c != '\t' && c != '\n' && c != '\r') || c == 0x7f) {
            char hex[8];
            std::snprintf(hex, sizeof hex, "0x%02x", c);
            throw Error(file + ":" + std::to_string(line) + ":" + std::to_string(col) + ": control character " + hex +
                        " (YAML allows tab, line feed and carriage return only)");
        }
        if (c == '\n')
            line++, col = 1;
        else
            col++;
    }
    try {
        std::istringstream in(text);
        YAML::Parser parser(in);
        DocumentStarts docs;
        // Two documents decide: one more is an error, and a parser that
        // does not move past a document's start never would.
        while (docs.starts.size() < 2 && parser.HandleNextDocument(docs)) {
        }
        if (docs.starts.size() == 2) {
            const YAML::Mark &first = docs.starts[0], &second = docs.starts[1];
            if (second.pos == first.pos)
                throw Error(yaml_where(file, second) + "cannot parse this: it is not the start of a YAML value (a stray ',' "
                                               "or ']' outside a [ ] or { } list?)");
            throw Error(yaml_where(file, second) + "a second YAML document (after '---'): " + what + " is one document");
        }
        return YAML::Load(text);
    } catch (const YAML::DeepRecursion &e) {
        // yaml-cpp says only "bad file" when its parser's recursion guard trips.
        throw Error(yaml_where(file, e.mark) + "nested too deeply: yaml-cpp parses at most " +
                    std::to_string(e.depth() - 1) + " levels of [ ], { } and indentation");
    } catch (const YAML::Exception &e) {
        throw Error(yaml_where(file, e.mark) + e.msg);
    }
}

}  // namespace npusim
