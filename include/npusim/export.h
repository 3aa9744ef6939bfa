/* NPU_API marks what libnpusim exports. The library is built with
 * -fvisibility=hidden: a function or table is visible to a program that
 * links it only when a public header declares it with NPU_API, so every
 * exported name is npu_-prefixed and documented here; the rest (the
 * assembler's and models' internals) stays inside the library. */
#ifndef NPUSIM_EXPORT_H
#define NPUSIM_EXPORT_H

#if defined(__GNUC__) || defined(__clang__)
#define NPU_API __attribute__((visibility("default")))
#else
#define NPU_API
#endif

#endif
