// The C locale for the numbers the library reads and prints, whatever locale
// the host process set: a Python program's locale.setlocale(LC_ALL,
// "de_DE.UTF-8") made every kernel fail ("malformed number '0.0'") and
// printed "0,5" (isa/c_locale.h does the same for the assembler).
#pragma once

#include <locale.h>

namespace npusim {

// The calling thread runs in the C locale while one is alive (uselocale:
// per thread, so workers take their own).
class CLocaleScope {
public:
    CLocaleScope() : host_(c_locale() ? uselocale(c_locale()) : locale_t(0)) {}
    ~CLocaleScope()
    {
        if (host_)
            uselocale(host_);
    }
    CLocaleScope(const CLocaleScope &) = delete;
    CLocaleScope &operator=(const CLocaleScope &) = delete;

private:
    static locale_t c_locale()
    {
        static const locale_t c = newlocale(LC_ALL_MASK, "C", locale_t(0));
        return c;
    }
    locale_t host_;
};

}  // namespace npusim
