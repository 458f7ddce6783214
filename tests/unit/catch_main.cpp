// SPDX-License-Identifier: BSD-3-Clause
// The one Catch2 main for all unit tests.
#define CATCH_CONFIG_MAIN
#include <catch2/catch.hpp>
