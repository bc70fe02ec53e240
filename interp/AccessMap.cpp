#include "interp/AccessMap.h"

#include <sstream>

namespace tc {

namespace {

std::string htmlEscape(const std::string &s) {
  std::string r;
  for (char c : s) {
    switch (c) {
    case '<': r += "&lt;"; break;
    case '>': r += "&gt;"; break;
    case '&': r += "&amp;"; break;
    case '"': r += "&quot;"; break;
    default: r += c;
    }
  }
  return r;
}

/// A JSON string; '<' is escaped too so that the text cannot end the <script>.
std::string jsonString(const std::string &s) {
  std::string r = "\"";
  for (unsigned char c : s) {
    if (c == '"' || c == '\\') {
      r += '\\';
      r += static_cast<char>(c);
    } else if (c < 0x20 || c == '<' || c == '>' || c == '&') {
      char buf[8];
      std::snprintf(buf, sizeof(buf), "\\u%04x", c);
      r += buf;
    } else {
      r += static_cast<char>(c);
    }
  }
  return r + "\"";
}

void rle(std::ostringstream &os, const std::vector<int32_t> &v) {
  os << '[';
  bool first = true;
  for (size_t i = 0; i < v.size();) {
    size_t j = i;
    while (j < v.size() && v[j] == v[i])
      ++j;
    os << (first ? "" : ",") << v[i] << ',' << (j - i);
    first = false;
    i = j;
  }
  os << ']';
}

const char *kStyle = R"(body{font-family:system-ui,sans-serif;margin:1.5em;color:#222}
h1{font-size:1.3em}h2{font-size:1.1em;margin-top:1.6em}
.views{display:flex;gap:2em;flex-wrap:wrap}.view h3{font-size:.95em;margin:.3em 0}
canvas{border:1px solid #999;image-rendering:pixelated}
.warn{color:#a40}.oob{color:#c00}#tip{position:fixed;background:#ffd;border:1px solid #888;
padding:2px 6px;font-size:.85em;pointer-events:none;display:none}
.legend span{display:inline-block;width:1em;height:1em;vertical-align:middle;margin:0 .3em 0 1em;
border:1px solid #999})";

const char *kScript = R"(
const D = JSON.parse(document.getElementById('access-data').textContent);
const G = D.grid;
function pid(i){ if(i<0) return 'none'; const z=i%G[2], y=Math.floor(i/G[2])%G[1],
  x=Math.floor(i/(G[1]*G[2])); return '('+x+', '+y+', '+z+')'; }
function colour(p){ const h=30+(p*137.508)%300, l=45+(p%3)*10; return 'hsl('+h+',70%,'+l+'%)'; }
function unrle(r,n){ const a=new Int32Array(n); let k=0;
  for(let i=0;i<r.length;i+=2) for(let j=0;j<r[i+1];j++) a[k++]=r[i]; return a; }
function idx(shape,e){ if(shape.length<2) return '['+e+']'; const r=[]; let t=e;
  for(let d=shape.length-1;d>=0;d--){ r.unshift(t%shape[d]); t=Math.floor(t/shape[d]); }
  return '['+r.join(', ')+'] (element '+e+')'; }
const tip=document.getElementById('tip');
D.buffers.forEach((b,bi)=>{
  const n=b.elements, cols=b.shape.length===2?b.shape[1]:Math.min(64,Math.max(1,n));
  const before=b.oob.filter(o=>o[1]<0).length?1:0;
  let maxOob=n-1; b.oob.forEach(o=>{ if(o[1]>maxOob) maxOob=Math.min(o[1],n+cols*4-1); });
  const rows=Math.ceil((maxOob+1)/cols)+before;
  const cell=Math.max(2,Math.min(14,Math.floor(440/cols)));
  const views={writer:unrle(b.writer,n),reader:unrle(b.reader,n)};
  ['writer','reader'].forEach(kind=>{
    const c=document.getElementById('c'+bi+kind); c.width=cols*cell; c.height=rows*cell;
    const g=c.getContext('2d'); const a=views[kind];
    for(let e=0;e<n;e++){ const x=(e%cols)*cell, y=(Math.floor(e/cols)+before)*cell;
      if(a[e]>=0){ g.fillStyle=colour(a[e]); g.fillRect(x,y,cell,cell); }
      else if(kind==='writer'){ g.fillStyle='#eee'; g.fillRect(x,y,cell,cell);
        g.strokeStyle='#999'; g.beginPath(); g.moveTo(x,y); g.lineTo(x+cell,y+cell);
        g.moveTo(x+cell,y); g.lineTo(x,y+cell); g.stroke(); } }
    b.oob.forEach(o=>{ let e=o[1]; if(e>=n&&e>maxOob) return;
      const r=e<0?0:Math.floor(e/cols)+before, col=e<0?((e%cols)+cols)%cols:e%cols;
      g.fillStyle='#e00'; g.fillRect(col*cell,r*cell,cell,cell); });
    c.addEventListener('mousemove',ev=>{ const r=c.getBoundingClientRect();
      const col=Math.floor((ev.clientX-r.left)/cell), row=Math.floor((ev.clientY-r.top)/cell)-before;
      const e=row*cols+col; let t;
      if(e>=0&&e<n) t=b.name+idx(b.shape,e)+': stored by '+pid(views.writer[e])+
        ', loaded by '+pid(views.reader[e]);
      else t=b.name+': element '+e+' is outside the buffer';
      b.oob.forEach(o=>{ if(o[1]===e) t+=' - out-of-bounds attempt by program '+pid(o[0])+
        ' (line '+o[2]+')'; });
      tip.textContent=t; tip.style.display='block'; tip.style.left=(ev.clientX+12)+'px';
      tip.style.top=(ev.clientY+12)+'px'; });
    c.addEventListener('mouseleave',()=>{ tip.style.display='none'; });
  });
});
)";

} // namespace

std::string describeUnwritten(const BufferAccess &b, size_t maxRanges) {
  if (b.stored == 0 || b.stored >= b.elements)
    return "";
  // Views of one array (arguments that overlap or sit side by side) are
  // counted as that array, named by all of them: the indices are the array's.
  std::string who = b.name, of = " elements never written (";
  if (!b.sharedWith.empty()) {
    who += " (one array with";
    for (size_t i = 0; i < b.sharedWith.size(); ++i)
      who += (i ? ", " : " ") + b.sharedWith[i];
    who += ")";
    of = " elements of the array never written (";
  }
  std::string s =
      who + ": " + std::to_string(b.elements - b.stored) + " of " + std::to_string(b.elements) + of;
  for (size_t i = 0; i < b.unwritten.size() && i < maxRanges; ++i) {
    auto [lo, hi] = b.unwritten[i];
    s += (i ? ", " : "") + std::to_string(lo) + (hi > lo ? ".." + std::to_string(hi) : "");
  }
  if (b.unwritten.size() > maxRanges)
    s += ", ...";
  return s + ")";
}

std::string renderAccessMap(const AccessMapLaunch &l) {
  std::ostringstream data;
  data << "{\"kernel\":" << jsonString(l.kernel) << ",\"grid\":[" << l.grid[0] << ',' << l.grid[1]
       << ',' << l.grid[2] << "],\"buffers\":[";
  for (size_t i = 0; i < l.buffers.size(); ++i) {
    const BufferAccess &b = l.buffers[i];
    data << (i ? "," : "") << "{\"name\":" << jsonString(b.name) << ",\"shape\":[";
    for (size_t d = 0; d < b.shape.size(); ++d)
      data << (d ? "," : "") << b.shape[d];
    data << "],\"elements\":" << b.elements << ",\"stored\":" << b.stored << ",\"unwritten\":[";
    for (size_t k = 0; k < b.unwritten.size(); ++k)
      data << (k ? "," : "") << '[' << b.unwritten[k].first << ',' << b.unwritten[k].second << ']';
    data << "],\"writer\":";
    rle(data, b.writer);
    data << ",\"reader\":";
    rle(data, b.reader);
    data << ",\"oob\":[";
    for (size_t k = 0; k < b.outOfBounds.size(); ++k)
      data << (k ? "," : "") << '[' << b.outOfBounds[k].program << ',' << b.outOfBounds[k].element
           << ',' << b.outOfBounds[k].line << ']';
    data << "]}";
  }
  data << "]}";

  std::ostringstream os;
  std::string grid = "(" + std::to_string(l.grid[0]) + ", " + std::to_string(l.grid[1]) + ", " +
                     std::to_string(l.grid[2]) + ")";
  os << "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n<title>access map: "
     << htmlEscape(l.kernel) << "</title>\n<style>" << kStyle << "</style></head>\n<body>\n"
     << "<h1>Access map of kernel '" << htmlEscape(l.kernel) << "', grid " << grid << "</h1>\n";
  if (!l.title.empty())
    os << "<p><code>" << htmlEscape(l.title) << "</code></p>\n";
  os << "<p class=\"legend\">Each cell is one element, coloured by the program that touched it "
        "last (hover for its id).<span style=\"background:#eee\"></span>never stored"
        "<span style=\"background:#e00\"></span>out-of-bounds attempt</p>\n";
  for (size_t i = 0; i < l.buffers.size(); ++i) {
    const BufferAccess &b = l.buffers[i];
    std::string shape;
    for (size_t d = 0; d < b.shape.size(); ++d)
      shape += (d ? ", " : "") + std::to_string(b.shape[d]);
    os << "<section class=\"buffer\" id=\"buffer-" << htmlEscape(b.name) << "\">\n<h2>"
       << htmlEscape(b.name) << " [" << shape << "]: " << b.stored << " of " << b.elements
       << " elements stored</h2>\n";
    if (std::string u = describeUnwritten(b); !u.empty())
      os << "<p class=\"warn\">" << htmlEscape(u) << "</p>\n";
    for (const BufferAccess::Attempt &a : b.outOfBounds)
      os << "<p class=\"oob\">out-of-bounds attempt: program " << a.program
         << " (row-major index), element " << a.element << " of " << htmlEscape(b.name) << ", line "
         << a.line << "</p>\n";
    os << "<div class=\"views\">";
    for (const char *kind : {"writer", "reader"})
      os << "<div class=\"view\"><h3>" << (kind[0] == 'w' ? "stores" : "loads")
         << "</h3><canvas id=\"c" << i << kind << "\"></canvas></div>";
    os << "</div>\n</section>\n";
  }
  os << "<div id=\"tip\"></div>\n<script type=\"application/json\" id=\"access-data\">"
     << data.str() << "</script>\n<script>" << kScript << "</script>\n</body></html>\n";
  return os.str();
}

} // namespace tc
