import 'uplot/dist/uPlot.min.css'
import '../style.css'
import { render } from 'preact'
import { PortalApp } from './PortalApp.tsx'

const root = document.getElementById('app')
if (root) render(<PortalApp />, root)
