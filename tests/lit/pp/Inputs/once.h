#pragma once
int once;
#include "nested.h"
