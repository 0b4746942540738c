// Registers every area's functions (bind/*_api.cc); the work lives in one folder per area (README.md).
#include <napi.h>

namespace basin {
void RegisterStore(Napi::Env env, Napi::Object exports);
void RegisterCsv(Napi::Env env, Napi::Object exports);
void RegisterParquet(Napi::Env env, Napi::Object exports);
void RegisterExpr(Napi::Env env, Napi::Object exports);
void RegisterGroupBy(Napi::Env env, Napi::Object exports);
void RegisterJoin(Napi::Env env, Napi::Object exports);
void RegisterSort(Napi::Env env, Napi::Object exports);
void RegisterWindow(Napi::Env env, Napi::Object exports);
void RegisterRows(Napi::Env env, Napi::Object exports);
void RegisterSpill(Napi::Env env, Napi::Object exports);
void RegisterLinalg(Napi::Env env, Napi::Object exports);
void RegisterArray(Napi::Env env, Napi::Object exports);
void RegisterGpu(Napi::Env env, Napi::Object exports);
void RegisterWrite(Napi::Env env, Napi::Object exports);
void RegisterDeviceTier(Napi::Env env, Napi::Object exports);
}  // namespace basin

static Napi::Object Init(Napi::Env env, Napi::Object exports) {
  basin::RegisterStore(env, exports);
  basin::RegisterCsv(env, exports);
  basin::RegisterParquet(env, exports);
  basin::RegisterExpr(env, exports);
  basin::RegisterGroupBy(env, exports);
  basin::RegisterJoin(env, exports);
  basin::RegisterSort(env, exports);
  basin::RegisterWindow(env, exports);
  basin::RegisterRows(env, exports);
  basin::RegisterSpill(env, exports);
  basin::RegisterLinalg(env, exports);
  basin::RegisterArray(env, exports);
  basin::RegisterGpu(env, exports);
  basin::RegisterWrite(env, exports);
  basin::RegisterDeviceTier(env, exports);
  return exports;
}

NODE_API_MODULE(basin, Init)
