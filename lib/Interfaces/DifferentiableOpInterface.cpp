//===- DifferentiableOpInterface.cpp - reverse-mode rules -----------------===//

#include "metac/Interfaces/DifferentiableOpInterface.h"

#include "metac/Interfaces/DifferentiableOpInterface.cpp.inc"
