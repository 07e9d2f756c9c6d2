//===- metac.cpp - the metac compiler -------------------------------------===//

#include "metac/Driver/Driver.h"

int main(int argc, char **argv) { return metac::metacMain(argc, argv); }
