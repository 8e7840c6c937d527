// canopy: the umbrella header of the C++ API.
#pragma once
#include "canopy/comm_matrix.hpp"
#include "canopy/cost.hpp"
#include "canopy/error.hpp"
#include "canopy/formats.hpp"
#include "canopy/mapping.hpp"
#include "canopy/placement.hpp"
#include "canopy/topology.hpp"
