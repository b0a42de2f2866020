// Copyright 2026 The flinkstate Authors. Licensed under the Apache License 2.0.
//
// RenderDoctorHtml (doctor.h): one self-contained page. The numbers are in
// static tables (readable without script); an inline script draws the
// treemap, the per-task bars and the growth chart as SVG from the report's
// JSON embedded in the page. Nothing is loaded from the network.

#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "flinkstate/doctor.h"
#include "flinkstate/inspect.h"

namespace flinkstate {
namespace {

std::string Esc(absl::string_view s) {
  return absl::StrReplaceAll(s, {{"&", "&amp;"}, {"<", "&lt;"}, {">", "&gt;"}, {"\"", "&quot;"}});
}

constexpr char kStyle[] = R"css(
body{font:14px/1.4 system-ui,sans-serif;margin:16px;color:#222}
h1{font-size:20px}h2{font-size:16px;margin-top:24px}
table{border-collapse:collapse;font-size:12px}td,th{border:1px solid #ccc;padding:2px 6px;text-align:right}
td.l,th.l{text-align:left}.over{background:#fdd}
.warn{background:#fff4e0;border-left:4px solid #e90;padding:4px 8px;margin:4px 0}
code{background:#f3f3f3;padding:1px 3px}
svg text{font-size:11px}
)css";

// Draws from `DATA` (the DoctorReport JSON). Written for this page.
constexpr char kScript[] = R"js(
(function(){
var D=JSON.parse(document.getElementById('doctor-data').textContent);
var NS='http://www.w3.org/2000/svg';
function el(n,a,p){var e=document.createElementNS(NS,n);for(var k in a)e.setAttribute(k,a[k]);if(p)p.appendChild(e);return e;}
function num(x){return Number(x||0);}
function hb(n){var u=['B','KiB','MiB','GiB'],i=0;while(n>=1024&&i<3){n/=1024;i++;}return (i?n.toFixed(2):n)+' '+u[i];}
var colors=['#4e79a7','#f28e2b','#e15759','#76b7b2','#59a14f','#edc948','#b07aa1','#ff9da7','#9c755f','#bab0ac'];
// Treemap operator -> state -> subtask (slice and dice by depth).
var tree={};
(D.duplicates&&D.duplicates.inlineByState||[]).forEach(function(s){
  var b=num(s.inlineBytes)+num(s.offsetBytes);if(!b)return;
  var o=tree[s.operatorId]=tree[s.operatorId]||{};var st=o[s.stateName]=o[s.stateName]||{};
  st['subtask '+s.subtaskIndex]=(st['subtask '+s.subtaskIndex]||0)+b;});
(D.restore&&D.restore.tasks||[]).forEach(function(t){
  if(tree[t.operatorId])return;var b=num(t.payloadBytes);
  var o=tree['k'+t.operatorId]=tree['k'+t.operatorId]||{};var st=o['(keyed, channel, other)']=o['(keyed, channel, other)']||{};
  st['subtask '+t.subtaskIndex]=b;});
function total(n){if(typeof n==='number')return n;var s=0;for(var k in n)s+=total(n[k]);return s;}
var W=900,H=420,tm=el('svg',{viewBox:'0 0 '+W+' '+H,width:'100%',id:'treemap'},document.getElementById('treemap-box'));
var ci=0;
function lay(node,x,y,w,h,depth,label,color){
  if(typeof node==='number'){
    var r=el('rect',{x:x,y:y,width:Math.max(w-1,0),height:Math.max(h-1,0),fill:color,stroke:'#fff'},tm);
    el('title',{},r).textContent=label+': '+node+' bytes';
    if(w>60&&h>14){var parts=label.split(' / '),t=el('text',{x:x+3,y:y+12,fill:'#fff'},tm);t.textContent=(parts[0].slice(0,8)+' '+parts[1]+' #'+parts[2].replace('subtask ','')).slice(0,Math.floor(w/6))+' '+hb(node);}
    return;}
  var keys=Object.keys(node).sort(function(a,b){return total(node[b])-total(node[a]);});
  var sum=total(node)||1,off=0;
  keys.forEach(function(k){var f=total(node[k])/sum;var c=depth===0?colors[(ci++)%colors.length]:color;
    var name=depth===0?k.replace(/^k/,''):k;
    if(depth%2===0)lay(node[k],x+off*w,y,f*w,h,depth+1,label?label+' / '+name:name,c);
    else lay(node[k],x,y+off*h,w,f*h,depth+1,label+' / '+name,c);off+=f;});
}
lay(tree,0,0,W,H,0,'','#888');
// Per-task payload against the frame size.
var items=(D.restore.chains&&D.restore.chains.length?D.restore.chains.map(function(c){return {l:c.name+' #'+c.subtaskIndex,b:num(c.deploymentBytes)};}):
  D.restore.tasks.map(function(t){return {l:(t.name||t.operatorId.slice(0,8))+' #'+t.subtaskIndex,b:num(t.payloadBytes)+num(D.restore.descriptorOverheadBytes)};}));
var frame=num(D.restore.frameSize),mx=Math.max(frame,Math.max.apply(null,items.map(function(i){return i.b;}).concat([1])));
var bh=16,bw=600,sv=el('svg',{viewBox:'0 0 '+(bw+330)+' '+(items.length*bh+30),width:'100%',id:'payload-chart'},document.getElementById('payload-box'));
items.forEach(function(it,i){var w=it.b/mx*bw;
  el('rect',{x:250,y:i*bh+4,width:w,height:bh-3,fill:it.b>frame?'#e15759':'#4e79a7'},sv);
  var t=el('text',{x:0,y:i*bh+15},sv);t.textContent=it.l.slice(0,38);
  var v=el('text',{x:255+w,y:i*bh+15},sv);v.textContent=it.b+' B';});
var fx=250+frame/mx*bw;el('line',{x1:fx,y1:0,x2:fx,y2:items.length*bh+8,stroke:'#000','stroke-dasharray':'4 3'},sv);
var ft=el('text',{x:fx+3,y:items.length*bh+24},sv);ft.textContent='frame size '+frame+' B';
// Growth over the history.
var cs=D.history.checkpoints||[],gw=600,gh=200,g=el('svg',{viewBox:'0 0 '+(gw+120)+' '+(gh+40),width:'100%',id:'growth-chart'},document.getElementById('growth-box'));
var my=Math.max.apply(null,cs.map(function(c){return num(c.fileSize);}).concat([1]));
var pts=cs.map(function(c,i){return [60+(cs.length>1?i/(cs.length-1):0.5)*gw,gh-num(c.fileSize)/my*(gh-10)];});
if(pts.length)el('polyline',{points:pts.map(function(p){return p.join(',');}).join(' '),fill:'none',stroke:'#f28e2b','stroke-width':2},g);
pts.forEach(function(p,i){el('circle',{cx:p[0],cy:p[1],r:4,fill:'#f28e2b'},g);
  var t=el('text',{x:p[0]-20,y:gh+15},g);t.textContent='chk '+cs[i].checkpointId;
  var v=el('text',{x:p[0]+5,y:p[1]-5},g);v.textContent=hb(num(cs[i].fileSize));});
})();
)js";

}  // namespace

std::string RenderDoctorHtml(const report::DoctorReport& r) {
  std::string json = RenderJson(r).value_or("{}");
  // Inside <script type="application/json">: no "</" may end the element.
  json = absl::StrReplaceAll(json, {{"</", "<\\/"}});
  const report::RestoreForecast& rf = r.restore();
  std::string o;
  absl::StrAppend(&o, "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>flinkstate doctor: ",
                  Esc(rf.file()), "</title><style>", kStyle, "</style></head><body>\n");
  absl::StrAppend(&o, "<h1>flinkstate doctor</h1><p>Restore forecast for <code>", Esc(rf.file()),
                  "</code>; frame size <b id=\"frame-size\">", rf.frame_size(), "</b> bytes (",
                  Esc(rf.frame_size_source()), "); largest task payload <b id=\"max-payload\">",
                  rf.max_payload_bytes(), "</b> bytes; minimum frame size that deploys <b id=\"min-frame\">",
                  rf.min_frame_size(), "</b> bytes; tasks over the frame size <b>",
                  rf.tasks_over_frame_size(), "</b>.</p>\n");
  absl::StrAppend(&o, "<p id=\"flink-release\">Flink ", Esc(rf.flink_version()), " (",
                  Esc(rf.flink_version_source()), "): task restores ",
                  rf.task_restore_offloading()
                      ? absl::StrCat("of ", rf.blob_offload_min_size(),
                                     " bytes or more go to the BLOB server; offloaded: <b>",
                                     rf.tasks_restore_offloaded(), "</b>")
                      : std::string("travel in the RPC"),
                  ".</p>\n");
  absl::StrAppend(&o, "<h2>Per-task payload against the frame size</h2><div id=\"payload-box\"></div>\n");
  absl::StrAppend(&o, "<h2>Bytes by operator, state and subtask</h2><div id=\"treemap-box\"></div>\n");
  absl::StrAppend(&o, "<h2>Warnings</h2>\n");
  for (const auto& w : r.warnings()) {
    absl::StrAppend(&o, "<div class=\"warn\" data-code=\"", Esc(w.code()), "\"><b>", Esc(w.code()),
                    "</b>: ", Esc(w.message()));
    if (!w.command().empty()) absl::StrAppend(&o, "<br>fix: <code>", Esc(w.command()), "</code>");
    absl::StrAppend(&o, "</div>\n");
  }
  absl::StrAppend(&o, "<table id=\"tasks\"><tr><th class=\"l\">operator</th><th class=\"l\">name</th>"
                      "<th>subtask</th><th>payload bytes</th><th>union</th><th>inline</th><th>offsets</th></tr>\n");
  for (const auto& t : rf.tasks()) {
    const bool over = t.rpc_bytes() > rf.frame_size();
    absl::StrAppend(&o, "<tr", over ? " class=\"over\"" : "", "><td class=\"l\">", t.operator_id(),
                    "</td><td class=\"l\">", Esc(t.name().empty() ? t.uid() : t.name()), "</td><td>",
                    t.subtask_index(), "</td><td>", t.payload_bytes(), "</td><td>", t.union_bytes(),
                    "</td><td>", t.inline_bytes(), "</td><td>", t.offset_bytes(), "</td></tr>\n");
  }
  absl::StrAppend(&o, "</table>\n");
  const report::HeapForecast& h = r.heap();
  absl::StrAppend(&o, "<h2>JobManager heap (estimate)</h2><p id=\"heap\">", h.checkpoint_bytes(),
                  " bytes per checkpoint x ", h.retained(), " retained + ",
                  h.assigned_restore_bytes(), " bytes of assigned task restores = ",
                  h.before_deployment_bytes(), " bytes before the tasks deploy; + ",
                  h.in_flight_bytes(), " bytes of descriptors if all were in flight = <b>",
                  h.restore_peak_bytes(), "</b> bytes (", HumanBytes(h.restore_peak_bytes()),
                  ") at most</p>\n");
  absl::StrAppend(&o, "<h2>Growth over the history</h2><div id=\"growth-box\"></div>\n"
                      "<table id=\"history\"><tr><th>checkpoint</th><th>file bytes</th>"
                      "<th>union entries</th><th>growth</th></tr>\n");
  for (const auto& c : r.history().checkpoints()) {
    absl::StrAppend(&o, "<tr><td>", c.checkpoint_id(), "</td><td>", c.file_size(), "</td><td>",
                    c.union_entries(), "</td><td>", c.growth_factor(), "</td></tr>\n");
  }
  absl::StrAppend(&o, "</table>\n<h2>Paths</h2><table id=\"paths\"><tr><th class=\"l\">prefix</th>"
                      "<th>handles</th><th>bytes</th></tr>\n");
  for (const auto& p : r.paths().prefixes()) {
    absl::StrAppend(&o, "<tr><td class=\"l\">", Esc(p.prefix()), "</td><td>", p.handles(),
                    "</td><td>", p.bytes(), "</td></tr>\n");
  }
  absl::StrAppend(&o, "</table>\n");
  for (const auto& n : r.notes()) absl::StrAppend(&o, "<p><small>", Esc(n), "</small></p>\n");
  absl::StrAppend(&o, "<script type=\"application/json\" id=\"doctor-data\">", json,
                  "</script>\n<script>", kScript, "</script>\n</body></html>\n");
  return o;
}

}  // namespace flinkstate
