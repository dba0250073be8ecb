import ts from 'typescript'; import fs from 'node:fs'; import path from 'node:path';
const dirs = ['domain','commands','projections','api','workers','infra','dashboard','cli','app','webhook-verifier'];
const out=[];
function walk(d){ for (const f of fs.readdirSync(d,{withFileTypes:true})) { const p=path.join(d,f.name); if (f.isDirectory()) walk(p); else if (p.endsWith('.ts')) check(p);} }
function check(p){ const sf=ts.createSourceFile(p,fs.readFileSync(p,'utf8'),ts.ScriptTarget.Latest,true);
  const visit=(n)=>{ if (ts.isFunctionDeclaration(n)||ts.isMethodDeclaration(n)||ts.isArrowFunction(n)||ts.isFunctionExpression(n)||ts.isConstructorDeclaration(n)) { if (n.body) { const a=sf.getLineAndCharacterOfPosition(n.getStart()).line, b=sf.getLineAndCharacterOfPosition(n.end).line; const len=b-a+1; if (len>70) { let name=n.name?.getText?.() ?? (ts.isVariableDeclaration(n.parent)? n.parent.name.getText(): ts.isPropertyAssignment(n.parent)? n.parent.name.getText() : '(anon)'); out.push([len,`${p}:${a+1} ${name}`]); } } } ts.forEachChild(n,visit); }; visit(sf); }
for (const d of dirs) walk(d);
out.sort((a,b)=>b[0]-a[0]); for (const [l,n] of out) console.log(l,n);
