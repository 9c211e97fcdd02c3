#include "support/test_util.h"
