// placeholder: replaced by the runtime work
#pragma once
