/*===- metart.h - metac runtime C API -------------------------------------===*/

#ifndef METART_METART_H
#define METART_METART_H

#ifdef __cplusplus
extern "C" {
#endif

/// The runtime's version, "major.minor.patch".
const char *metart_version(void);

#ifdef __cplusplus
}
#endif

#endif /* METART_METART_H */
