import 'uplot/dist/uPlot.min.css'
import './style.css'
import { render } from 'preact'
import { App } from './App.tsx'

const root = document.getElementById('app')
if (root) render(<App />, root)
