/* The C locale, for the numbers the library reads and writes (assembly
 * literals, disassembly, reports) whatever locale the host process set: a
 * Python program's locale.setlocale(LC_ALL, "de_DE.UTF-8") made strtod read
 * "0.5" as 0 and stop at the '.'. Internal: not part of the installed API. */
#ifndef NPUSIM_ISA_C_LOCALE_H
#define NPUSIM_ISA_C_LOCALE_H

#include <locale.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Switches the calling thread to the C locale; returns what to give back to
 * isa_locale_restore. Cheap (a thread-local pointer), so every entry point
 * of the assembler and the disassembler takes it. */
locale_t isa_locale_enter(void);
void isa_locale_restore(locale_t previous);

#ifdef __cplusplus
}
#endif

#endif
