/* Error codes shared by every npusim library call: 0 is success, negative is
 * an error. Messages for users travel separately in npu_diag. */
#ifndef NPUSIM_ERRORS_H
#define NPUSIM_ERRORS_H

#include "npusim/export.h"

#ifdef __cplusplus
extern "C" {
#endif

enum {
    NPU_OK = 0,
    NPU_EINVAL = -1,   /* bad argument */
    NPU_ENOMEM = -2,   /* allocation failed */
    NPU_EIO = -3,      /* file could not be read or written */
    NPU_ESYNTAX = -4,  /* assembler: bad source */
    NPU_EDECODE = -5,  /* not a valid instruction word */
    NPU_EFORMAT = -6,  /* bad file format (binary, .npy) */
    NPU_ERANGE = -7    /* a value outside its allowed range */
};

/* One diagnostic for a user: `file:line:col: message`. */
typedef struct npu_diag {
    char file[256];
    int line; /* 1-based; 0 when not about a source position */
    int col;  /* 1-based */
    char message[256];
} npu_diag;

/* Formats a diagnostic as one line (no newline) into buf. */
NPU_API void npu_diag_format(const npu_diag *d, char *buf, unsigned size);

#ifdef __cplusplus
}
#endif
#endif
