// Glue between N-API values and native tables. Arguments arrive validated by
// TypeScript; these helpers only convert, and turn BasinError into a JS Error with `code`.
#pragma once
#include <napi.h>

#include <functional>

#include "store/column.h"

namespace basin {

// Runs `fn`, converting a BasinError or std::exception into a thrown JS error
// whose `code` property is the BasinError code (BASIN_INTERNAL otherwise).
Napi::Value Guard(const Napi::CallbackInfo& info, const std::function<Napi::Value()>& fn);

uint64_t HandleArg(const Napi::Value& v);
Napi::Value HandleValue(Napi::Env env, uint64_t handle);
TablePtr TableArg(const Napi::Value& v);                // a handle → the stored table
Napi::Value PutTable(Napi::Env env, TablePtr t);        // stores it, returns the new handle
std::vector<std::string> StringList(const Napi::Value& v);
std::vector<int> IntList(const Napi::Value& v);

}  // namespace basin
