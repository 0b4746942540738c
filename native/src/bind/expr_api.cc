// JS entry points for expression evaluation and filtering.
#include <napi.h>

#include "bind/napi_util.h"
#include "bind/plan_args.h"
#include "ops/expr.h"

namespace basin {
namespace {

FnOption ParseOption(const Napi::Value& v) {
  FnOption o;
  if (v.IsString()) {
    o.kind = FnOption::Kind::String;
    o.text = v.As<Napi::String>().Utf8Value();
  } else if (v.IsBoolean()) {
    o.kind = FnOption::Kind::Bool;
    o.flag = v.As<Napi::Boolean>().Value();
  } else if (v.IsNumber()) {
    o.kind = FnOption::Kind::Number;
    o.num = v.As<Napi::Number>().DoubleValue();
  } else if (v.IsArray()) {
    o.kind = FnOption::Kind::List;
    auto arr = v.As<Napi::Array>();
    for (uint32_t i = 0; i < arr.Length(); i++) o.list.push_back(ParseOption(arr.Get(i)));
  }
  return o;
}

}  // namespace

Expr ParseExpr(const Napi::Object& o) {
  Expr e;
  std::string kind = o.Get("kind").As<Napi::String>().Utf8Value();
  e.type = DTypeFromName(o.Get("type").As<Napi::String>().Utf8Value());
  if (kind == "col") {
    e.kind = ExprKind::Col;
    e.index = o.Get("index").As<Napi::Number>().Int32Value();
  } else if (kind == "lit") {
    e.kind = ExprKind::Lit;
    Napi::Value v = o.Get("value");
    if (v.IsNull() || v.IsUndefined()) e.isNull = true;
    else if (v.IsString()) e.text = v.As<Napi::String>().Utf8Value();
    else if (v.IsBoolean()) e.num = v.As<Napi::Boolean>().Value() ? 1 : 0;
    else {
      e.num = v.As<Napi::Number>().DoubleValue();
      e.integer = v.As<Napi::Number>().Int64Value();
    }
  } else if (kind == "binary") {
    e.kind = ExprKind::Binary;
    e.op = o.Get("op").As<Napi::String>().Utf8Value();
    e.args.push_back(ParseExpr(o.Get("left").As<Napi::Object>()));
    e.args.push_back(ParseExpr(o.Get("right").As<Napi::Object>()));
  } else if (kind == "unary") {
    e.kind = ExprKind::Unary;
    e.op = o.Get("op").As<Napi::String>().Utf8Value();
    e.args.push_back(ParseExpr(o.Get("arg").As<Napi::Object>()));
  } else if (kind == "fillNull") {
    e.kind = ExprKind::FillNull;
    e.args.push_back(ParseExpr(o.Get("arg").As<Napi::Object>()));
    e.args.push_back(ParseExpr(o.Get("fill").As<Napi::Object>()));
  } else if (kind == "cast") {
    e.kind = ExprKind::Cast;
    e.args.push_back(ParseExpr(o.Get("arg").As<Napi::Object>()));
    if (o.Get("strict").IsBoolean()) e.strict = o.Get("strict").As<Napi::Boolean>().Value();
    if (o.Get("label").IsString()) e.label = o.Get("label").As<Napi::String>().Utf8Value();
  } else if (kind == "fn") {
    e.kind = ExprKind::Fn;
    e.op = o.Get("name").As<Napi::String>().Utf8Value();
    auto args = o.Get("args").As<Napi::Array>();
    for (uint32_t i = 0; i < args.Length(); i++) e.args.push_back(ParseExpr(args.Get(i).As<Napi::Object>()));
    auto opts = o.Get("options").As<Napi::Object>();
    auto keys = opts.GetPropertyNames();
    for (uint32_t i = 0; i < keys.Length(); i++) {
      std::string key = keys.Get(i).As<Napi::String>().Utf8Value();
      e.options[key] = ParseOption(opts.Get(key));
    }
  } else {
    throw BasinError("BASIN_INTERNAL", "unknown expression kind '" + kind + "'");
  }
  return e;
}

void RegisterExpr(Napi::Env env, Napi::Object exports) {
  exports.Set("evalExprs", Napi::Function::New(env, [](const Napi::CallbackInfo& info) {
    return Guard(info, [&]() -> Napi::Value {
      TablePtr t = TableArg(info[0]);
      auto arr = info[1].As<Napi::Array>();
      std::vector<Expr> exprs;
      for (uint32_t i = 0; i < arr.Length(); i++) exprs.push_back(ParseExpr(arr.Get(i).As<Napi::Object>()));
      return PutTable(info.Env(), EvalExprs(*t, exprs, StringList(info[2])));
    });
  }));
  exports.Set("checkRegex", Napi::Function::New(env, [](const Napi::CallbackInfo& info) {
    return Guard(info, [&]() -> Napi::Value {
      std::string why = RegexError(info[0].As<Napi::String>().Utf8Value());
      if (why.empty()) return info.Env().Null();
      return Napi::String::New(info.Env(), why);
    });
  }));
  exports.Set("filter", Napi::Function::New(env, [](const Napi::CallbackInfo& info) {
    return Guard(info, [&]() -> Napi::Value {
      TablePtr t = TableArg(info[0]);
      return PutTable(info.Env(), Filter(*t, ParseExpr(info[1].As<Napi::Object>())));
    });
  }));
}

}  // namespace basin
