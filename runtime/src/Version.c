/*===- Version.c - metac runtime version ----------------------------------===*/

#include "metart/metart.h"

const char *metart_version(void) { return "0.1.0"; }
