// Shared by the gomp/ entry points: the export attribute (the version script
// src/omp/libgomp.map puts each symbol in libgomp's version node).
#pragma once
#define CANOPY_GOMP extern "C" __attribute__((visibility("default")))
